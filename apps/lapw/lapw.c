/* lapw: an MPI program shaped like lapw0 of WIEN2k, the material science code of the SCALEA
 * paper's section 5.3 (effective potential of the Kohn-Sham problem; loops over atoms distributed
 * over the processes, sequentialized FFT sections, MPI_Init a visible cost).
 *
 * A model, not physics: `atoms` atoms sit at fixed pseudo-random positions (64-bit LCG, seed 2001)
 * in a periodic cubic cell of side 10 bohr; the electron density is a sum of Gaussians, one per
 * atom. The program computes a Hartree + exchange-correlation potential the way lapw0 is organized:
 *
 *   mpi_init                MPI_Init (its cost is what the tool attributes to control of
 *                           parallelism).
 *   setup                   replicated on every rank: positions, spherical-harmonic table, radial
 *                           and angular meshes (replicated code).
 *   fft_rean0               rank 0 only: density on the n^3 grid (n^3 x atoms Gaussians), forward
 *                           3-D FFT; MPI_Bcast of rho(G) to all ranks. Other ranks wait in the
 *                           Bcast: a sequentialized section (loss of parallelism).
 *   loop_50                 parallel over atoms (BLOCK distribution, below): per atom, the density
 *                           around it projected on 16 real spherical harmonics (l <= 3) on a
 *                           radial x angular mesh (nr x 288 points, every atom's Gaussian at every
 *                           point), radial Hartree integrals, multipoles and sphere energy;
 *                           MPI_Allreduce of the multipoles.
 *   interstitial_potential  parallel over atoms (BLOCK): every atom's compensating charge over all
 *                           n^3 plane waves (one sincos per G and atom); MPI_Reduce of the n^3
 *                           complex coefficients to rank 0 (16 n^3 bytes).
 *   fft_rean3               rank 0: V(G) = 4 pi (rho(G) - comp(G)) / G^2, inverse 3-D FFT, LDA
 *                           exchange-correlation on the grid.
 *   fft_rean4               rank 0: forward 3-D FFT of the total potential, the FFT self-check
 *                           (inverse of that forward transform), MPI_Bcast of V(G).
 *   energy_output           MPI_Reduce of the sphere energies, rank 0 prints.
 *
 * Load imbalance: atoms are distributed in BLOCK fashion as an HPF/Fortran code would:
 * b = ceil(atoms / p) consecutive atoms per rank, the last ranks get fewer or none. All atoms cost
 * the same, so with 36 atoms p = 2, 3, 4, 6, 9, 12, 18, 36 are balanced and p = 5 (8,8,8,8,4),
 * p = 8 (5 x 7 ranks, 1), p = 16 (3 x 12 ranks, 0 x 4) or p = 24 (2 x 18, 0 x 6) are not: the
 * busiest rank has more atoms than atoms/p and the others wait in the following collective.
 *
 * Self-check (rank 0, exit 2 with "SELF-CHECK FAILED"): the radix-2 FFT is checked twice:
 * inverse(forward(V)) equals V within 1e-10 relative (max norm), and four coefficients of the
 * forward transform equal a directly summed DFT within 1e-9 relative.
 *
 * usage: [mpirun -np P] lapw [atoms=36] [size=2]
 *   size: power of two; FFT grid (32 size)^3, radial mesh 100 size points.
 *   default: 36 atoms, size 2 (64^3 grid): about 1.1 s of CPU on one rank
 *   larger : lapw 36 4   (128^3 grid: FFT sections 8-9x, loop_50 2x, interstitial 8x)
 */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scalea/scalea.h"

#define NLM 16   /* real spherical harmonics, l <= 3 */
#define NTHETA 12
#define NPHI 24
#define NANG (NTHETA * NPHI)

static const double PI = 3.14159265358979323846;
static const double CELL = 10.0;  /* bohr */
static const double ALPHA = 2.0;  /* Gaussian exponent of the model density */
static const double RMT = 1.2;    /* sphere (muffin-tin) radius */
static const double ZVAL = 4.0;   /* electrons per atom */

typedef struct {
  double re, im;
} cplx;

/* ---------------------------------------------------------------- FFT (radix 2) ---------------- */

/* In-place iterative radix-2 FFT of length n (power of two); sign -1 forward, +1 inverse
 * (unscaled). tw holds exp(-2 pi i k / n), k < n/2. */
static void fft1d(cplx* a, int n, int sign, const cplx* tw) {
  for (int i = 1, j = 0; i < n; ++i) { /* bit reversal */
    int bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      cplx t = a[i];
      a[i] = a[j];
      a[j] = t;
    }
  }
  for (int len = 2; len <= n; len <<= 1) {
    int step = n / len;
    for (int i = 0; i < n; i += len) {
      for (int k = 0; k < len / 2; ++k) {
        cplx w = tw[k * step];
        if (sign > 0) w.im = -w.im;
        cplx u = a[i + k], v = a[i + k + len / 2];
        cplx t = {v.re * w.re - v.im * w.im, v.re * w.im + v.im * w.re};
        a[i + k] = (cplx){u.re + t.re, u.im + t.im};
        a[i + k + len / 2] = (cplx){u.re - t.re, u.im - t.im};
      }
    }
  }
}

/* 3-D FFT of an n^3 grid, index (z n + y) n + x; the inverse is scaled by 1/n^3. */
static void fft3d(cplx* g, int n, int sign, const cplx* tw, cplx* line) {
  const size_t n2 = (size_t)n * n;
  for (size_t l = 0; l < n2; ++l) fft1d(g + l * n, n, sign, tw); /* x lines: contiguous */
  for (int z = 0; z < n; ++z)                                    /* y lines: stride n */
    for (int x = 0; x < n; ++x) {
      cplx* base = g + z * n2 + x;
      for (int y = 0; y < n; ++y) line[y] = base[(size_t)y * n];
      fft1d(line, n, sign, tw);
      for (int y = 0; y < n; ++y) base[(size_t)y * n] = line[y];
    }
  for (size_t yx = 0; yx < n2; ++yx) { /* z lines: stride n^2 */
    cplx* base = g + yx;
    for (int z = 0; z < n; ++z) line[z] = base[z * n2];
    fft1d(line, n, sign, tw);
    for (int z = 0; z < n; ++z) base[z * n2] = line[z];
  }
  if (sign > 0) {
    const double s = 1.0 / ((double)n2 * n);
    for (size_t i = 0; i < n2 * n; ++i) g[i].re *= s, g[i].im *= s;
  }
}

/* ---------------------------------------------------------------- model ------------------------ */

static uint64_t lcg_state = 2001;
static double uniform(void) {
  lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(lcg_state >> 11) * (1.0 / 9007199254740992.0);
}

static inline double min_image(double d) { return d - CELL * nearbyint(d / CELL); }

/* Model density at point p: every atom's Gaussian at its nearest periodic image. */
static double density(const double* p, const double (*tau)[3], int natoms) {
  const double norm = ZVAL * pow(ALPHA / PI, 1.5);
  double rho = 0.0;
  for (int b = 0; b < natoms; ++b) {
    double dx = min_image(p[0] - tau[b][0]), dy = min_image(p[1] - tau[b][1]),
           dz = min_image(p[2] - tau[b][2]);
    rho += exp(-ALPHA * (dx * dx + dy * dy + dz * dz));
  }
  return norm * rho;
}

/* Real spherical harmonics up to l = 3 (unnormalized polynomials) at unit vector (x, y, z). */
static void ylm(double x, double y, double z, double* out) {
  out[0] = 1.0;
  out[1] = x, out[2] = y, out[3] = z;
  out[4] = x * y, out[5] = y * z, out[6] = 3 * z * z - 1, out[7] = x * z, out[8] = x * x - y * y;
  out[9] = y * (3 * x * x - y * y), out[10] = x * y * z, out[11] = y * (5 * z * z - 1);
  out[12] = z * (5 * z * z - 3), out[13] = x * (5 * z * z - 1), out[14] = z * (x * x - y * y);
  out[15] = x * (x * x - 3 * y * y);
}
static const int LOF[NLM] = {0, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3};

/* lapw0's loop 50 for one atom: density projected on the harmonics on the radial x angular mesh,
 * radial Hartree potential per lm, multipoles q_lm and the sphere's Hartree energy. */
static double sphere_atom(int a, const double (*tau)[3], int natoms, int nr, const double* ang,
                          const double* wang, const double* ytab, double* q) {
  double* rho_lm = calloc((size_t)nr * NLM, sizeof(double));
  const double dr = RMT / nr;
  for (int i = 0; i < nr; ++i) {
    const double r = (i + 0.5) * dr;
    for (int k = 0; k < NANG; ++k) {
      double p[3] = {tau[a][0] + r * ang[3 * k], tau[a][1] + r * ang[3 * k + 1],
                     tau[a][2] + r * ang[3 * k + 2]};
      double w = wang[k] * density(p, tau, natoms);
      for (int lm = 0; lm < NLM; ++lm) rho_lm[i * NLM + lm] += w * ytab[k * NLM + lm];
    }
  }
  double energy = 0.0;
  for (int lm = 0; lm < NLM; ++lm) {
    const int l = LOF[lm];
    double inner = 0.0, outer = 0.0;
    for (int i = 0; i < nr; ++i) { /* outer integral from r to RMT, all of it first */
      double r = (i + 0.5) * dr;
      outer += rho_lm[i * NLM + lm] * pow(r, 1 - l) * dr;
    }
    for (int i = 0; i < nr; ++i) {
      double r = (i + 0.5) * dr, rho = rho_lm[i * NLM + lm];
      double half_in = 0.5 * rho * pow(r, l + 2) * dr, half_out = 0.5 * rho * pow(r, 1 - l) * dr;
      inner += half_in;
      outer -= half_out;
      double v = 4 * PI / (2 * l + 1) * (inner * pow(r, -l - 1) + outer * pow(r, l));
      inner += half_in;
      outer -= half_out;
      energy += 0.5 * rho * v * r * r * dr;
    }
    q[lm] = inner;
  }
  free(rho_lm);
  return energy;
}

/* ---------------------------------------------------------------- main ------------------------- */

int main(int argc, char** argv) {
  SCALEA_REGION_BEGIN("mpi_init");
  MPI_Init(&argc, &argv);
  SCALEA_REGION_END("mpi_init");
  int rank, nprocs;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

  int natoms = 36, size = 2;
  if (argc > 3 || (argc > 1 && (natoms = atoi(argv[1])) < 1) ||
      (argc > 2 && ((size = atoi(argv[2])) < 1 || (size & (size - 1)) || size > 16))) {
    if (rank == 0) fprintf(stderr, "usage: %s [atoms>=1] [size: 1, 2, 4, 8 or 16]\n", argv[0]);
    MPI_Finalize();
    return 1;
  }
  const int n = 32 * size, nr = 100 * size;
  const size_t ngrid = (size_t)n * n * n;
  const double t_start = MPI_Wtime();

  /* ---- setup (replicated on every rank) ---- */
  SCALEA_REGION_BEGIN("setup");
  double(*tau)[3] = malloc(sizeof(double[3]) * natoms);
  for (int a = 0; a < natoms; ++a)
    for (int k = 0; k < 3; ++k) tau[a][k] = CELL * uniform();
  double ang[3 * NANG], wang[NANG], ytab[NANG * NLM];
  for (int it = 0, k = 0; it < NTHETA; ++it) {
    double th = PI * (it + 0.5) / NTHETA;
    for (int ip = 0; ip < NPHI; ++ip, ++k) {
      double ph = 2 * PI * ip / NPHI;
      ang[3 * k] = sin(th) * cos(ph), ang[3 * k + 1] = sin(th) * sin(ph), ang[3 * k + 2] = cos(th);
      wang[k] = sin(th) * (PI / NTHETA) * (2 * PI / NPHI);
      ylm(ang[3 * k], ang[3 * k + 1], ang[3 * k + 2], ytab + k * NLM);
    }
  }
  cplx* tw = malloc(sizeof(cplx) * n / 2);
  for (int k = 0; k < n / 2; ++k) tw[k] = (cplx){cos(2 * PI * k / n), -sin(2 * PI * k / n)};
  cplx* line = malloc(sizeof(cplx) * n);
  cplx* rho_g = malloc(sizeof(cplx) * ngrid); /* rho(G), then V(G) */
  cplx* comp = malloc(sizeof(cplx) * ngrid);  /* compensating charge, per rank then summed */
  cplx* work = rank == 0 ? malloc(sizeof(cplx) * ngrid) : NULL;
  cplx* keep = rank == 0 ? malloc(sizeof(cplx) * ngrid) : NULL;
  if (!tau || !tw || !line || !rho_g || !comp || (rank == 0 && (!work || !keep))) {
    fprintf(stderr, "lapw: rank %d: out of memory for a %d^3 grid\n", rank, n);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  /* BLOCK distribution of the atoms */
  const int block = (natoms + nprocs - 1) / nprocs;
  const int a_lo = rank * block < natoms ? rank * block : natoms;
  const int a_hi = a_lo + block < natoms ? a_lo + block : natoms;
  SCALEA_REGION_END("setup");
  if (rank == 0)
    printf("lapw: %d atoms on %d ranks (BLOCK %d: busiest rank %d atoms, mean %.2f), grid %d^3, "
           "radial mesh %d\n",
           natoms, nprocs, block, block < natoms ? block : natoms, (double)natoms / nprocs, n, nr);

  /* ---- fft_rean0: density on the grid and its transform (rank 0), broadcast ---- */
  SCALEA_REGION_BEGIN("fft_rean0");
  if (rank == 0) {
    const double h = CELL / n;
    for (int z = 0; z < n; ++z)
      for (int y = 0; y < n; ++y)
        for (int x = 0; x < n; ++x) {
          double p[3] = {x * h, y * h, z * h};
          rho_g[((size_t)z * n + y) * n + x] = (cplx){density(p, tau, natoms), 0.0};
        }
    fft3d(rho_g, n, -1, tw, line);
  }
  MPI_Bcast(rho_g, (int)(2 * ngrid), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  SCALEA_REGION_END("fft_rean0");

  /* ---- loop_50: spherical part, parallel over atoms ---- */
  SCALEA_REGION_BEGIN("loop_50");
  double* q = calloc((size_t)natoms * NLM, sizeof(double));
  double* e_atom = calloc((size_t)natoms, sizeof(double));
  for (int a = a_lo; a < a_hi; ++a)
    e_atom[a] = sphere_atom(a, (const double(*)[3])tau, natoms, nr, ang, wang, ytab, q + a * NLM);
  MPI_Allreduce(MPI_IN_PLACE, q, natoms * NLM, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  SCALEA_REGION_END("loop_50");

  /* ---- interstitial_potential: compensating charges over all plane waves, parallel over atoms */
  SCALEA_REGION_BEGIN("interstitial_potential");
  memset(comp, 0, sizeof(cplx) * ngrid);
  const double g0 = 2 * PI / CELL;
  for (int a = a_lo; a < a_hi; ++a) {
    const double q0 = q[a * NLM]; /* monopole: the charge in the sphere */
    for (int z = 0; z < n; ++z) {
      const double gz = g0 * (z <= n / 2 ? z : z - n);
      for (int y = 0; y < n; ++y) {
        const double gy = g0 * (y <= n / 2 ? y : y - n);
        for (int x = 0; x < n; ++x) {
          const double gx = g0 * (x <= n / 2 ? x : x - n);
          const double g2 = gx * gx + gy * gy + gz * gz;
          const double phase = gx * tau[a][0] + gy * tau[a][1] + gz * tau[a][2];
          const double amp = q0 * exp(-g2 / (4 * ALPHA)) * (double)ngrid / (CELL * CELL * CELL);
          cplx* c = comp + ((size_t)z * n + y) * n + x;
          c->re += amp * cos(phase);
          c->im -= amp * sin(phase);
        }
      }
    }
  }
  MPI_Reduce(rank == 0 ? MPI_IN_PLACE : comp, comp, (int)(2 * ngrid), MPI_DOUBLE, MPI_SUM, 0,
             MPI_COMM_WORLD);
  SCALEA_REGION_END("interstitial_potential");

  /* ---- fft_rean3: Hartree potential to real space, exchange-correlation (rank 0) ---- */
  SCALEA_REGION_BEGIN("fft_rean3");
  double exc = 0.0;
  if (rank == 0) {
    for (int z = 0; z < n; ++z) {
      const double gz = g0 * (z <= n / 2 ? z : z - n);
      for (int y = 0; y < n; ++y) {
        const double gy = g0 * (y <= n / 2 ? y : y - n);
        for (int x = 0; x < n; ++x) {
          const double gx = g0 * (x <= n / 2 ? x : x - n);
          const double g2 = gx * gx + gy * gy + gz * gz;
          const size_t i = ((size_t)z * n + y) * n + x;
          const double f = g2 > 0 ? 4 * PI / g2 : 0.0;
          work[i] = (cplx){f * (rho_g[i].re - 0.1 * comp[i].re), f * (rho_g[i].im - 0.1 * comp[i].im)};
        }
      }
    }
    fft3d(work, n, +1, tw, line); /* V_H(r) */
    memcpy(keep, rho_g, sizeof(cplx) * ngrid);
    fft3d(keep, n, +1, tw, line); /* rho(r) again, for the LDA */
    const double dv = CELL * CELL * CELL / (double)ngrid;
    for (size_t i = 0; i < ngrid; ++i) {
      double rho = keep[i].re > 0 ? keep[i].re : 0.0;
      double vx = -cbrt(3.0 * rho / PI);
      exc += 0.75 * vx * rho * dv;
      work[i].re += vx;
      work[i].im = 0.0;
    }
  }
  SCALEA_REGION_END("fft_rean3");

  /* ---- fft_rean4: total potential to G space, FFT self-check, broadcast (rank 0) ---- */
  SCALEA_REGION_BEGIN("fft_rean4");
  int failed = 0;
  double err_roundtrip = 0.0, err_dft = 0.0;
  if (rank == 0) {
    memcpy(keep, work, sizeof(cplx) * ngrid); /* V(r) */
    fft3d(work, n, -1, tw, line);             /* V(G) */
    /* a few coefficients against the directly summed DFT */
    const int probe[4][3] = {{1, 0, 0}, {0, 2, 1}, {3, 1, n - 1}, {n / 2, n / 4, 5 % n}};
    double vmax = 0.0, gmax = 0.0;
    for (size_t i = 0; i < ngrid; ++i) {
      vmax = fmax(vmax, hypot(keep[i].re, keep[i].im));
      gmax = fmax(gmax, hypot(work[i].re, work[i].im));
    }
    for (int p = 0; p < 4; ++p) {
      double sre = 0.0, sim = 0.0;
      for (int z = 0; z < n; ++z)
        for (int y = 0; y < n; ++y)
          for (int x = 0; x < n; ++x) {
            double ph = -2 * PI *
                        ((double)(probe[p][0] * x % n) / n + (double)(probe[p][1] * y % n) / n +
                         (double)(probe[p][2] * z % n) / n);
            const cplx v = keep[((size_t)z * n + y) * n + x];
            sre += v.re * cos(ph) - v.im * sin(ph);
            sim += v.re * sin(ph) + v.im * cos(ph);
          }
      const cplx f = work[((size_t)probe[p][2] * n + probe[p][1]) * n + probe[p][0]];
      err_dft = fmax(err_dft, hypot(f.re - sre, f.im - sim) / gmax);
    }
    memcpy(rho_g, work, sizeof(cplx) * ngrid); /* V(G), to broadcast */
    fft3d(work, n, +1, tw, line);              /* inverse of the forward transform */
    for (size_t i = 0; i < ngrid; ++i)
      err_roundtrip =
          fmax(err_roundtrip, hypot(work[i].re - keep[i].re, work[i].im - keep[i].im) / vmax);
    failed = !(err_roundtrip <= 1e-10) || !(err_dft <= 1e-9);
  }
  MPI_Bcast(rho_g, (int)(2 * ngrid), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  SCALEA_REGION_END("fft_rean4");

  /* ---- energy_output ---- */
  SCALEA_REGION_BEGIN("energy_output");
  double e_local = 0.0, e_total = 0.0, q_total = 0.0;
  for (int a = a_lo; a < a_hi; ++a) e_local += e_atom[a];
  MPI_Reduce(&e_local, &e_total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  for (int a = 0; a < natoms; ++a) q_total += q[a * NLM];
  if (rank == 0) {
    printf("lapw: sphere charge %.9f, sphere Hartree energy %.9f, E_xc %.9f, V(G=0) %.6e\n",
           q_total, e_total, exc, rho_g[0].re);
    printf("lapw: FFT check: |ifft(fft(V)) - V| / |V| = %.2e (bound 1e-10), |fft - DFT| / |fft| = "
           "%.2e (bound 1e-9)\n",
           err_roundtrip, err_dft);
    printf("lapw: time %.3f s\n", MPI_Wtime() - t_start);
  }
  MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  SCALEA_REGION_END("energy_output");
  if (rank == 0) {
    if (failed)
      fprintf(stderr, "lapw: SELF-CHECK FAILED: FFT round trip error %.2e or DFT error %.2e too "
              "large\n", err_roundtrip, err_dft);
    else
      printf("lapw: self-check passed (FFT)\n");
  }
  free(tau), free(tw), free(line), free(rho_g), free(comp), free(work), free(keep), free(q);
  free(e_atom);
  MPI_Finalize();
  return failed ? 2 : 0;
}
