/* md: molecular dynamics in OpenMP, after the classic md.f / md.c (Bill Magro, Kuck and Associates;
 * John Burkardt's C version), the program of the SCALEA paper's section 5.1.
 *
 *   np particles in nd = 3 dimensions, mass 1, pairwise potential v(d) = sin^2(min(d, pi/2)) with
 *   force -dv/dd = -sin(2 min(d, pi/2)), time integration by velocity Verlet with time step dt.
 *
 * Phases, each a user region (scalea/scalea.h):
 *   init           serial: particles placed one by one in the box [0, box]^3 with a minimum-distance
 *                  rejection test (O(np^2) / 2 work on one thread), zero velocities/accelerations.
 *   compute        forces + potential and kinetic energy (and Verlet's second half-kick, which
 *                  needs the new forces): `omp parallel for reduction(+: pot, kin)` over particles,
 *                  O(np^2). Its schedule is schedule(runtime): OMP_SCHEDULE chooses it (libomp
 *                  default: static), e.g. OMP_SCHEDULE=dynamic,1 for chunk-by-chunk dispatch.
 *   update         accelerations a = f/m, half-kick v += dt/2 a, drift x += dt v:
 *                  `omp parallel for`, O(np).
 *   energy_output  serial, at step 0, every `every` steps and at the last: total energy, its
 *                  error, total momentum and a pair-distance histogram (closest pair, first peak
 *                  of g(r)): O(np^2 / 2) on one thread, one line on stdout.
 *
 * Deterministic: the initial positions come from a fixed 64-bit LCG (seed 12345), so every run
 * with the same np starts from the same configuration; only the reduction order (thread count)
 * changes the energies, in the last few digits.
 *
 * Self-check: velocity Verlet conserves the total energy E = pot + kin up to O(dt^2). Most of the
 * potential is a constant (every pair farther apart than pi/2 adds 1/2), so the error is measured
 * against the energy that actually moved: max over the output steps of |E(t) - E(0)| / kin(t).
 * The program exits 2 with "SELF-CHECK FAILED" when that exceeds MD_TOLERANCE (1e-4) or an energy
 * is not finite. Measured: 1.5e-6 at the default and the larger size, any thread count; a
 * first-order integrator error (a half-kick of the wrong size) gives 0.3.
 *
 * usage: md [particles=1024] [steps=50] [every=5]
 *   default: 1024 particles, 50 steps: about 1.5 s of CPU on one thread here
 *   larger : md 4096 50   (16x the compute work, about 25 s of CPU)
 * dt = 1e-3 (the classic code's 1e-4 barely moves the particles in 50 steps).
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "scalea/scalea.h"

#define ND 3
#define MD_TOLERANCE 1e-4

static const double PI2 = 3.14159265358979323846 / 2.0;
static const double MASS = 1.0;
static const double DT = 1.0e-3;

/* Potential and its derivative, as in the classic code. */
static inline double v(double x) {
  double s = sin(x < PI2 ? x : PI2);
  return s * s;
}
static inline double dv(double x) {
  double y = x < PI2 ? x : PI2;
  return 2.0 * sin(y) * cos(y);
}

/* Deterministic uniform numbers in [0, 1): Knuth's MMIX LCG, top 53 bits. */
static uint64_t lcg_state = 12345;
static double uniform(void) {
  lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(lcg_state >> 11) * (1.0 / 9007199254740992.0);
}

/* Places np particles in [0, box]^3, each at least dmin from every earlier one (rejection). */
static void initialize(int np, double box, double dmin, double (*pos)[ND], double (*vel)[ND],
                       double (*acc)[ND]) {
  double dmin2 = dmin * dmin;
  long rejected = 0;
  for (int i = 0; i < np; ++i) {
    for (;;) {
      for (int k = 0; k < ND; ++k) pos[i][k] = box * uniform();
      int ok = 1;
      for (int j = 0; j < i && ok; ++j) {
        double d2 = 0.0;
        for (int k = 0; k < ND; ++k) {
          double r = pos[i][k] - pos[j][k];
          d2 += r * r;
        }
        ok = d2 >= dmin2;
      }
      if (ok) break;
      ++rejected;
    }
    for (int k = 0; k < ND; ++k) vel[i][k] = acc[i][k] = 0.0;
  }
  (void)rejected;
}

/* Forces f at the current positions and the potential and kinetic energies (the classic compute
 * routine). Velocity Verlet's second half-kick v(t) = v(t - dt/2) + dt/2 f(t)/m needs these forces,
 * so it is done here, per particle, when `kick` is set (every step but the first). */
static void compute(int np, const double (*pos)[ND], double (*vel)[ND], double (*f)[ND], int kick,
                    double* pot_out, double* kin_out) {
  double pot = 0.0, kin = 0.0;
  const double half = kick ? 0.5 * DT / MASS : 0.0;
#pragma omp parallel for schedule(runtime) reduction(+ : pot, kin)
  for (int i = 0; i < np; ++i) {
    double fi[ND] = {0.0, 0.0, 0.0};
    for (int j = 0; j < np; ++j) {
      if (i == j) continue;
      double rij[ND], d2 = 0.0;
      for (int k = 0; k < ND; ++k) {
        rij[k] = pos[i][k] - pos[j][k];
        d2 += rij[k] * rij[k];
      }
      double d = sqrt(d2);
      pot += 0.5 * v(d);
      double s = dv(d) / d;
      for (int k = 0; k < ND; ++k) fi[k] -= rij[k] * s;
    }
    for (int k = 0; k < ND; ++k) {
      f[i][k] = fi[k];
      vel[i][k] += half * fi[k];
      kin += vel[i][k] * vel[i][k];
    }
  }
  *pot_out = pot;
  *kin_out = 0.5 * MASS * kin;
}

/* Velocity Verlet's first half: accelerations a = f/m, half-kick v += dt/2 a, drift x += dt v
 * (the classic update routine: positions, velocities, accelerations). */
static void update(int np, double (*pos)[ND], double (*vel)[ND], const double (*f)[ND],
                   double (*acc)[ND]) {
  const double rmass = 1.0 / MASS;
#pragma omp parallel for
  for (int i = 0; i < np; ++i) {
    for (int k = 0; k < ND; ++k) {
      acc[i][k] = f[i][k] * rmass;
      vel[i][k] += 0.5 * DT * acc[i][k];
      pos[i][k] += DT * vel[i][k];
    }
  }
}

/* Serial diagnostics of the output steps: the pair-distance histogram (radial distribution),
 * its first peak and the closest pair. O(np^2 / 2), on one thread, like the output code of many MD
 * programs: this is the part whose idle PEs the tool reports as loss of parallelism. */
#define NBIN 64
static void diagnostics(int np, const double (*pos)[ND], double box, double* rmin_out,
                        double* rpeak_out) {
  long hist[NBIN] = {0};
  const double rmax = 0.5 * box, scale = NBIN / rmax;
  double rmin2 = INFINITY;
  for (int i = 0; i < np; ++i)
    for (int j = i + 1; j < np; ++j) {
      double d2 = 0.0;
      for (int k = 0; k < ND; ++k) {
        double r = pos[i][k] - pos[j][k];
        d2 += r * r;
      }
      if (d2 < rmin2) rmin2 = d2;
      double d = sqrt(d2);
      if (d < rmax) ++hist[(int)(d * scale)];
    }
  int peak = 0; /* g(r) ~ hist / r^2: the first bin where it is largest */
  double best = -1.0;
  for (int b = 1; b < NBIN; ++b) {
    double r = (b + 0.5) / scale, g = hist[b] / (r * r);
    if (g > best) best = g, peak = b;
  }
  *rmin_out = sqrt(rmin2);
  *rpeak_out = (peak + 0.5) / scale;
}

/* One output line: energies, the energy error, total momentum, the diagnostics. */
static void output(int step, int np, const double (*pos)[ND], const double (*vel)[ND], double box,
                   double pot, double kin, double err) {
  double p[ND] = {0.0, 0.0, 0.0}; /* total momentum: stays 0 (forces are pairwise) */
  for (int i = 0; i < np; ++i)
    for (int k = 0; k < ND; ++k) p[k] += MASS * vel[i][k];
  double rmin, rpeak;
  diagnostics(np, pos, box, &rmin, &rpeak);
  printf("%8d %16.9e %16.9e %13.3e %10.2e %9.4f %9.3f\n", step, pot, kin, err,
         sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]), rmin, rpeak);
}

static int usage(const char* prog) {
  fprintf(stderr, "usage: %s [particles>=2] [steps>=1] [every>=1]\n", prog);
  return 1;
}

int main(int argc, char** argv) {
  int np = 1024, steps = 50, every = 5;
  if (argc > 4) return usage(argv[0]);
  if (argc > 1 && (np = atoi(argv[1])) < 2) return usage(argv[0]);
  if (argc > 2 && (steps = atoi(argv[2])) < 1) return usage(argv[0]);
  if (argc > 3 && (every = atoi(argv[3])) < 1) return usage(argv[0]);

  /* The box grows with np so the density (and the force per particle) stays about constant:
   * 10^3 volume per 1000 particles as in the classic code. */
  const double box = 10.0 * cbrt(np / 1000.0);
  const double dmin = 0.5 * box / cbrt((double)np); /* half the mean spacing */

  double(*pos)[ND] = malloc(sizeof(double[ND]) * np);
  double(*vel)[ND] = malloc(sizeof(double[ND]) * np);
  double(*acc)[ND] = malloc(sizeof(double[ND]) * np);
  double(*f)[ND] = malloc(sizeof(double[ND]) * np);
  if (!pos || !vel || !acc || !f) {
    fprintf(stderr, "md: out of memory for %d particles\n", np);
    return 1;
  }

  printf("md: %d particles, %d steps, dt %g, box %.3f, %d threads\n", np, steps, DT, box,
         omp_get_max_threads());
  double t0 = omp_get_wtime();

  SCALEA_REGION_BEGIN("init");
  initialize(np, box, dmin, pos, vel, acc);
  SCALEA_REGION_END("init");

  double pot, kin;
  SCALEA_REGION_BEGIN("compute");
  compute(np, (const double(*)[ND])pos, vel, f, 0, &pot, &kin);
  SCALEA_REGION_END("compute");
  const double e0 = pot + kin;
  double max_drift = 0.0;
  int bad = !isfinite(e0) || e0 == 0.0;
  printf("%8s %16s %16s %13s %10s %9s %9s\n", "step", "potential", "kinetic", "|dE|/kinetic",
         "|momentum|", "min pair", "g(r) peak");
  SCALEA_REGION_BEGIN("energy_output");
  output(0, np, (const double(*)[ND])pos, (const double(*)[ND])vel, box, pot, kin, 0.0);
  SCALEA_REGION_END("energy_output");

  for (int step = 1; step <= steps && !bad; ++step) {
    SCALEA_REGION_BEGIN("update");
    update(np, pos, vel, (const double(*)[ND])f, acc);
    SCALEA_REGION_END("update");

    SCALEA_REGION_BEGIN("compute");
    compute(np, (const double(*)[ND])pos, vel, f, 1, &pot, &kin);
    SCALEA_REGION_END("compute");

    if (step % every == 0 || step == steps) {
      SCALEA_REGION_BEGIN("energy_output");
      /* Energy error relative to the energy that moved between potential and kinetic (the
       * potential's large constant part, pairs beyond pi/2, does not hide an error). */
      double e = pot + kin, drift = fabs(e - e0) / (kin > 0.0 ? kin : 1.0);
      if (!isfinite(e)) bad = 1;
      if (drift > max_drift) max_drift = drift;
      output(step, np, (const double(*)[ND])pos, (const double(*)[ND])vel, box, pot, kin, drift);
      SCALEA_REGION_END("energy_output");
    }
  }
  double t1 = omp_get_wtime();
  free(pos);
  free(vel);
  free(acc);
  free(f);

  printf("md: time %.3f s, max |E(t) - E(0)| / kinetic %.3e (bound %.0e)\n", t1 - t0, max_drift,
         MD_TOLERANCE);
  if (bad || !(max_drift <= MD_TOLERANCE)) {
    fprintf(stderr, "md: SELF-CHECK FAILED: total energy not conserved (|dE|/kinetic %.3e > %.0e%s)\n",
            max_drift, MD_TOLERANCE, bad ? ", non-finite energy" : "");
    return 2;
  }
  printf("md: self-check passed (energy conserved)\n");
  return 0;
}
