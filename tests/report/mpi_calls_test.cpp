// The MPI call at a region's source line (report/src/findings/mpi_calls.cpp): its arguments as
// written, across lines and comments, in C and Fortran; nothing when the call cannot be followed.
#include "findings/mpi_calls.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace scalea::cli {
namespace {

using Args = std::vector<std::string>;

TEST(MpiCalls, ArgumentsOfACCall) {
  std::vector<std::string> src{
      "  MPI_Allreduce(&e, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* one */",  // 1
      "  MPI_Allreduce(sums + f(a, b), out, n * 2, /* the type: */ MPI_DOUBLE,",     // 2
      "                MPI_SUM, // the operation",                                   // 3
      "                comm[0]);",                                                   // 4
      "  x = MPI_Allreducer(1, 2);",                                                 // 5
      "  MPI_Bcast(\"a,b\", 3, MPI_CHAR, 0, c);",                                    // 6
      "  MPI_Allreduce(a, b, 1, MPI_INT,"};                                          // 7
  MpiCall c = mpi_call_in(src, 1, "MPI_Allreduce");
  ASSERT_TRUE(c.found);
  EXPECT_EQ(c.line, 1u);
  EXPECT_EQ(c.args, (Args{"&e", "&s", "1", "MPI_DOUBLE", "MPI_SUM", "MPI_COMM_WORLD"}));
  // A call over three lines, with comments and nested parentheses, found from its last line.
  c = mpi_call_in(src, 4, "MPI_Allreduce");
  ASSERT_TRUE(c.found);
  EXPECT_EQ(c.line, 2u);
  EXPECT_EQ(c.args, (Args{"sums+f(a,b)", "out", "n*2", "MPI_DOUBLE", "MPI_SUM", "comm[0]"}));
  // Another function whose name starts the same is not the call; nor is a call below the line.
  EXPECT_FALSE(
      mpi_call_in({"x = MPI_Allreducer(1, 2);", "MPI_Allreduce(a, b);"}, 1, "MPI_Allreduce").found);
  EXPECT_FALSE(
      mpi_call_in({"MPI_Allreduce_x(a);", "", "", "", "MPI_Allreduce(a);"}, 4, "MPI_Allreduce")
          .found);
  c = mpi_call_in(src, 6, "MPI_Bcast");
  ASSERT_TRUE(c.found);
  EXPECT_EQ(c.args, (Args{"\"a,b\"", "3", "MPI_CHAR", "0", "c"}));
  // Not closed within the file: nothing guessed.
  EXPECT_FALSE(mpi_call_in(src, 7, "MPI_Allreduce").found);
  EXPECT_FALSE(mpi_call_in(src, 0, "MPI_Allreduce").found);
  EXPECT_FALSE(mpi_call_in(src, 99, "MPI_Allreduce").found);
  EXPECT_FALSE(mpi_call_at("/nonexistent.c", 1, "MPI_Allreduce").found);
}

TEST(MpiCalls, ArgumentsOfAFortranCall) {
  std::vector<std::string> src{
      "      call MPI_ALLREDUCE(e, s, 1, MPI_DOUBLE_PRECISION, &   ! energy",  // 1
      "     &                   MPI_SUM, MPI_COMM_WORLD, ierr)",               // 2
      "      call mpi_bcast(n, 1, MPI_INTEGER, 0, comm, ierr) ! n != 0"};      // 3
  MpiCall c = mpi_call_in(src, 2, "MPI_Allreduce");
  ASSERT_TRUE(c.found);
  EXPECT_EQ(c.line, 1u);
  EXPECT_EQ(c.args,
            (Args{"e", "s", "1", "MPI_DOUBLE_PRECISION", "MPI_SUM", "MPI_COMM_WORLD", "ierr"}));
  c = mpi_call_in(src, 3, "MPI_Bcast");
  ASSERT_TRUE(c.found);
  EXPECT_EQ(c.args, (Args{"n", "1", "MPI_INTEGER", "0", "comm", "ierr"}));
}

TEST(MpiCalls, WhatFusedCallsMustShare) {
  auto whats = [](const std::string& f) {
    std::string out;
    for (const CallKey& k : fusion_key(f)) out += std::to_string(k.arg) + k.what + " ";
    return out;
  };
  EXPECT_EQ(whats("MPI_Allreduce"), "3datatype 4operation 5communicator ");
  EXPECT_EQ(whats("mpi_reduce"), "3datatype 4operation 5root 6communicator ");
  EXPECT_EQ(whats("MPI_Bcast"), "2datatype 3root 4communicator ");
  EXPECT_EQ(whats("MPI_Send"), "");
}

// A blocking point-to-point call's buffers and partners, read from the call as written: the
// roles' positions give "MPI_Sendrecv of out to right into in from left".
TEST(MpiCalls, WhatBlockingCallsMoveAndWithWhom) {
  std::vector<std::string> src{
      "  MPI_Sendrecv(out, n, MPI_DOUBLE, right, 0,",                 // 1
      "               in, n, MPI_DOUBLE, left, 0, comm, &status);",   // 2
      "  call mpi_recv(buf, n, MPI_REAL, src, tag, comm, st, ierr)",  // 3
  };
  const P2pRoles sr = p2p_roles("MPI_Sendrecv");
  const MpiCall c = mpi_call_in(src, 2, "MPI_Sendrecv");
  ASSERT_TRUE(c.found);
  ASSERT_GE(c.args.size(), sr.args_needed());
  EXPECT_EQ(c.args[size_t(sr.send_buf)], "out");
  EXPECT_EQ(c.args[size_t(sr.dest)], "right");
  EXPECT_EQ(c.args[size_t(sr.recv_buf)], "in");
  EXPECT_EQ(c.args[size_t(sr.source)], "left");
  const P2pRoles recv = p2p_roles("MPI_Recv");
  const MpiCall f = mpi_call_in(src, 3, "MPI_Recv");
  ASSERT_TRUE(f.found);
  EXPECT_EQ(recv.send_buf, -1);
  EXPECT_EQ(f.args[size_t(recv.recv_buf)], "buf");
  EXPECT_EQ(f.args[size_t(recv.source)], "src");
  EXPECT_TRUE(p2p_roles("mpi_ssend").blocking());
  EXPECT_EQ(p2p_roles("MPI_Sendrecv_replace").args_needed(), 6u);
  EXPECT_FALSE(p2p_roles("MPI_Isend").blocking());  // completes elsewhere: not a blocking call
  EXPECT_FALSE(p2p_roles("MPI_Allreduce").blocking());
}

}  // namespace
}  // namespace scalea::cli
