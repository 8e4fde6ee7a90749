// A core metric that exists only in the fake-metric test's build (tests/unit/tests.cmake): one
// row of SCALEA_CORE_METRICS, included before anything else into every source of that build.
#pragma once
#define SCALEA_EXTRA_CORE_METRICS(X) X(Fake, "fake", U64, Sum, Count, Own, fake)
