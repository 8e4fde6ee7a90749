/* pricing: backward-induction pricing of interest-rate products on a trinomial short-rate lattice,
 * hybrid MPI + OpenMP; modeled on the backward pricing code of the SCALEA paper's section 5.2
 * (a variable coupon bond priced by backward induction, HPF and OpenMP+MPI versions).
 *
 * Model (Ho-Lee, trinomial): maturity T = 10 years in M steps of dt = T/M. The short rate at step n
 * and state j is r(n, j) = r0 + theta n dt + j dr with dr = sigma sqrt(3 dt); from every node the
 * rate moves up, stays or moves down one state with probabilities 1/6, 2/3, 1/6 (mean 0, variance
 * sigma^2 dt). One-step discount D(n, j) = exp(-r(n, j) dt).
 *
 * Products (NPROD = 16, priced together on the same lattice, notional 1, paid at T):
 *   0      zero-coupon bond: V = D * E[V'] (checked against its closed form, below)
 *   1      par floater: coupon exp(r dt) - 1 fixed at n, paid at n+1: worth exactly 1 (checked)
 *   2..15  callable capped/floored floaters ("variable coupon bonds"): coupon
 *          clamp(r + spread, floor, cap) dt, issuer may call at par from step M/4 on:
 *          V = min(D * (E[V'] + coupon), 1). Spreads, caps and floors differ per product.
 * where E[V'] = V(n+1, j+1)/6 + 2 V(n+1, j)/3 + V(n+1, j-1)/6.
 *
 * Parallelization: the state dimension (S states, j = -(S-1)/2 .. (S-1)/2, the full grid updated
 * at every step as a data-parallel code would) is block-distributed over the MPI ranks; each rank
 * keeps one halo state on each side. Every backward step: update_halo (MPI_Sendrecv of the boundary
 * states' NPROD values with the left and right neighbours), then lattice_step (an OpenMP parallel
 * loop over the rank's states). At the end MPI_Reduce brings the root node's prices to rank 0 and
 * MPI_Allreduce gathers the per-rank compute time (min/max, printed as load balance).
 *
 * Regions (scalea/scalea.h): init, backward_induction > {update_halo, lattice_step}, reduce,
 * report (rank 0 checks and prints; the others wait in MPI_Bcast of the verdict).
 *
 * Self-check (rank 0, exit 2 with "SELF-CHECK FAILED"): the zero-coupon bond equals the lattice's
 * closed form  exp(-dt sum_{n<M} (r0 + theta n dt)) prod_{i=1}^{M-1} (2/3 + cosh(dt dr (M-i))/3)
 * and the par floater equals 1, both within 1e-9 (relative). This holds when the grid is wide
 * enough that its edges cannot reach the root: S >= 2M + 1 (enforced). Every node's arithmetic is
 * the same for any number of ranks and threads, so all prices are bitwise identical across
 * decompositions: compare the printed checksum of a p-rank run with the 1-rank run.
 *
 * usage: [mpirun -np R] pricing [steps=2500] [states=2*steps+1]
 *   default: 2500 steps x 5001 states x 16 products: about 0.5 s of CPU on one rank, one thread
 *   larger : pricing 10000       (16x the work, 4x the halo exchanges)
 */
#include <math.h>
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scalea/scalea.h"

#define NPROD 16
#define TOLERANCE 1e-9

static const double T_YEARS = 10.0, R0 = 0.03, THETA = 0.002, SIGMA = 0.01;

static int usage(int rank, const char* prog) {
  if (rank == 0) fprintf(stderr, "usage: %s [steps>=1] [states: odd, >= 2*steps+1]\n", prog);
  return 1;
}

int main(int argc, char** argv) {
  int provided, rank, nranks;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);

  long steps = 2500, states = -1;
  if (argc > 3 || (argc > 1 && (steps = atol(argv[1])) < 1) ||
      (argc > 2 && (states = atol(argv[2])) < 1)) {
    int rc = usage(rank, argv[0]);
    MPI_Finalize();
    return rc;
  }
  if (states < 0) states = 2 * steps + 1;
  if (states % 2 == 0 || states < 2 * steps + 1 || states < nranks) {
    if (rank == 0)
      fprintf(stderr,
              "pricing: states must be odd, at least 2*steps+1 = %ld (an untruncated lattice) and "
              "at least the number of ranks (%d); got %ld\n",
              2 * steps + 1, nranks, states);
    MPI_Finalize();
    return 1;
  }

  const long M = steps, S = states, J = (S - 1) / 2;
  const double dt = T_YEARS / (double)M, dr = SIGMA * sqrt(3.0 * dt);
  const double pu = 1.0 / 6.0, pm = 2.0 / 3.0, pd = 1.0 / 6.0;
  const long call_from = M / 4;

  /* Block distribution of the global states g = 0..S-1 (j = g - J). */
  const long lo = rank * S / nranks, hi = (rank + 1) * S / nranks, n_local = hi - lo;
  const int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
  const int right = rank < nranks - 1 ? rank + 1 : MPI_PROC_NULL;

  if (rank == 0)
    printf("pricing: %ld steps, %ld states, %d products, %d ranks x %d threads (MPI thread level "
           "%d)\n",
           M, S, NPROD, nranks, omp_get_max_threads(), provided);
  double t_start = MPI_Wtime();

  /* ---- init: product terms, terminal values ---- */
  SCALEA_REGION_BEGIN("init");
  double spread[NPROD], cap[NPROD], floor_[NPROD];
  for (int k = 0; k < NPROD; ++k) {
    spread[k] = 0.0005 * (k % 4);
    cap[k] = 0.04 + 0.005 * (k / 4);
    floor_[k] = 0.01 + 0.0025 * (k % 3);
  }
  /* Rows 0 and n_local + 1 are the halo; row i + 1 holds local state i. */
  double* cur = malloc(sizeof(double) * NPROD * (size_t)(n_local + 2));
  double* nxt = malloc(sizeof(double) * NPROD * (size_t)(n_local + 2));
  if (!cur || !nxt) {
    fprintf(stderr, "pricing: rank %d: out of memory for %ld states\n", rank, n_local);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
#pragma omp parallel for
  for (long i = 0; i < (n_local + 2) * NPROD; ++i) nxt[i] = 1.0; /* V(M, j) = notional */
  SCALEA_REGION_END("init");

  /* ---- backward induction: n = M-1 .. 0 ---- */
  double t_compute = 0.0;
  SCALEA_REGION_BEGIN("backward_induction");
  for (long n = M - 1; n >= 0; --n) {
    /* nxt holds V(n+1, .) for the local states; fill its halo rows. */
    SCALEA_REGION_BEGIN("update_halo");
    double* first = nxt + NPROD;
    double* last = nxt + NPROD * n_local;
    double* halo_lo = nxt;
    double* halo_hi = nxt + NPROD * (n_local + 1);
    MPI_Sendrecv(first, NPROD, MPI_DOUBLE, left, 0, halo_hi, NPROD, MPI_DOUBLE, right, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(last, NPROD, MPI_DOUBLE, right, 1, halo_lo, NPROD, MPI_DOUBLE, left, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    /* Grid edges: the missing neighbour is taken as the edge state itself. These nodes cannot
     * reach the root when S >= 2M+1, so this choice does not change the prices. */
    if (left == MPI_PROC_NULL) memcpy(halo_lo, first, sizeof(double) * NPROD);
    if (right == MPI_PROC_NULL) memcpy(halo_hi, last, sizeof(double) * NPROD);
    SCALEA_REGION_END("update_halo");

    SCALEA_REGION_BEGIN("lattice_step");
    double t0 = MPI_Wtime();
    const double rate_n = R0 + THETA * (double)n * dt;
    const int callable = n >= call_from;
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n_local; ++i) {
      const double r = rate_n + (double)(lo + i - J) * dr;
      const double disc = exp(-r * dt);
      const double* up = nxt + NPROD * (i + 2);
      const double* mid = nxt + NPROD * (i + 1);
      const double* dn = nxt + NPROD * i;
      double* out = cur + NPROD * (i + 1);
      /* 0: zero-coupon bond */
      out[0] = disc * (pu * up[0] + pm * mid[0] + pd * dn[0]);
      /* 1: par floater, coupon exp(r dt) - 1 paid at n+1 */
      out[1] = disc * (pu * up[1] + pm * mid[1] + pd * dn[1] + (exp(r * dt) - 1.0));
      /* 2..: callable capped/floored floaters */
      for (int k = 2; k < NPROD; ++k) {
        double c = r + spread[k];
        c = c < floor_[k] ? floor_[k] : (c > cap[k] ? cap[k] : c);
        double hold = disc * (pu * up[k] + pm * mid[k] + pd * dn[k] + c * dt);
        out[k] = callable && hold > 1.0 ? 1.0 : hold;
      }
    }
    t_compute += MPI_Wtime() - t0;
    double* tmp = cur;
    cur = nxt;
    nxt = tmp;
    SCALEA_REGION_END("lattice_step");
  }
  SCALEA_REGION_END("backward_induction");

  /* ---- reduce: root prices to rank 0, load balance to all ---- */
  SCALEA_REGION_BEGIN("reduce");
  double mine[NPROD], price[NPROD];
  for (int k = 0; k < NPROD; ++k) mine[k] = 0.0;
  if (lo <= J && J < hi) /* this rank owns the root state j = 0 */
    for (int k = 0; k < NPROD; ++k) mine[k] = nxt[NPROD * (J - lo + 1) + k];
  MPI_Reduce(mine, price, NPROD, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  double tmax, tmin;
  MPI_Allreduce(&t_compute, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&t_compute, &tmin, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  SCALEA_REGION_END("reduce");
  double t_total = MPI_Wtime() - t_start;

  SCALEA_REGION_BEGIN("report");
  int failed = 0;
  if (rank == 0) {
    /* closed form of the lattice's zero-coupon bond */
    double log_p = 0.0;
    for (long n = 0; n < M; ++n) log_p -= dt * (R0 + THETA * (double)n * dt);
    for (long i = 1; i < M; ++i) log_p += log(2.0 / 3.0 + cosh(dt * dr * (double)(M - i)) / 3.0);
    const double zcb = exp(log_p);
    const double err_zcb = fabs(price[0] - zcb) / zcb, err_par = fabs(price[1] - 1.0);
    double checksum = 0.0;
    for (int k = 0; k < NPROD; ++k) checksum += price[k];
    printf("%8s %18s\n", "product", "price");
    printf("%8s %18.12f   (closed form %.12f, rel. error %.1e)\n", "zcb", price[0], zcb, err_zcb);
    printf("%8s %18.12f   (exactly 1, error %.1e)\n", "par", price[1], err_par);
    for (int k = 2; k < NPROD; ++k) printf("%8d %18.12f\n", k, price[k]);
    printf("pricing: checksum %.15f\n", checksum);
    printf("pricing: time %.3f s, lattice compute per rank min %.3f s max %.3f s\n", t_total, tmin,
           tmax);
    if (!(err_zcb <= TOLERANCE) || !(err_par <= TOLERANCE)) {
      fprintf(stderr,
              "pricing: SELF-CHECK FAILED: zero-coupon bond rel. error %.2e, par floater error "
              "%.2e (bound %.0e)\n",
              err_zcb, err_par, TOLERANCE);
      failed = 1;
    } else {
      printf("pricing: self-check passed (zero-coupon bond = closed form, par floater = 1)\n");
    }
  }
  MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  SCALEA_REGION_END("report");
  free(cur);
  free(nxt);
  MPI_Finalize();
  return failed ? 2 : 0;
}
