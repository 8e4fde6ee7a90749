/* io_planted: file I/O of known size at known places, for the I/O regions (collect/io;
 * docs/groundtruth.md).
 *
 *   io_planted DIR [MB=4] [STATUS=0]
 *
 * main writes DIR/main.dat with write() in 1 MiB blocks (MAIN_WRITE) and fsync()s it
 * (MAIN_FSYNC), reads it back with read() (MAIN_READ), then writes and reads DIR/stdio.dat with
 * fwrite() and fread() (STDIO_WRITE, STDIO_READ). Then a parallel region of two threads (PAR):
 * each thread writes its own file DIR/thread-N.dat with pwrite() (PAR_WRITE) and reads it back
 * with pread() (PAR_READ), MB/2 MiB each. Every file is removed at the end.
 *
 * Truth printed (seconds each group of calls took, as the program measured it around them; the
 * threads' times summed): truth main_write, main_read, stdio_write, stdio_read, par_write,
 * par_read, and the bytes each moved: truth main_bytes, par_bytes (per thread).
 * Also printed, identical with and without the tool: what the calls returned and the errno they
 * left (a failed open, a read of a bad descriptor, a successful writev after errno = 0), and a
 * checksum of what was read back; on stderr a line written by a constructor and one by a
 * destructor.
 * Exits with STATUS.
 */
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "planted.h"

#define BLOCK (1024 * 1024)

static char* path_in(const char* dir, const char* name) {
  static char buf[4][4096];
  static int next = 0;
  char* p = buf[next++ % 4];
  snprintf(p, 4096, "%s/%s", dir, name);
  return p;
}

/* I/O before main and after it: the program's constructor and destructor write a line each to
 * stderr with fputs (stderr is unbuffered: before the tool's experiment is written, and while
 * the process ends; fputs, so that no byte joins the write() calls main's checks count). */
__attribute__((constructor)) static void before_main(void) {
  if (fputs("written by a constructor\n", stderr) < 0) _exit(4);
}
__attribute__((destructor)) static void after_main(void) {
  if (fputs("written by a destructor\n", stderr) < 0) _exit(4);
}

static void fail(const char* what) {
  fprintf(stderr, "io_planted: %s: %s\n", what, strerror(errno));
  exit(2);
}

static unsigned long checksum(const char* buf, size_t n) {
  unsigned long s = 0;
  for (size_t i = 0; i < n; i += 4096) s = s * 31 + (unsigned char)buf[i];
  return s;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: io_planted DIR [MB] [STATUS]\n");
    return 2;
  }
  const char* dir = argv[1];
  int mb = (int)arg_num(argc, argv, 2, 4);
  int status = (int)arg_num(argc, argv, 3, 0);
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) fail("mkdir");
  char* buf = malloc(BLOCK);
  if (!buf) fail("malloc");
  for (int i = 0; i < BLOCK; ++i) buf[i] = (char)(i * 7 + 3);
  unsigned long sum = 0;

  /* main: write() + fsync(), then read() */
  const char* main_file = path_in(dir, "main.dat");
  int fd = open(main_file, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  if (fd < 0) fail("open");
  double t0 = now_s();
  for (int i = 0; i < mb; ++i)
    if (write(fd, buf, BLOCK) != BLOCK) fail("write"); /* MAIN_WRITE */
  if (fsync(fd) != 0) fail("fsync");                   /* MAIN_FSYNC */
  double main_write = now_s() - t0;
  close(fd);
  fd = open(main_file, O_RDONLY);
  if (fd < 0) fail("open");
  t0 = now_s();
  for (int i = 0; i < mb; ++i) {
    if (read(fd, buf, BLOCK) != BLOCK) fail("read"); /* MAIN_READ */
    sum += checksum(buf, BLOCK);
  }
  double main_read = now_s() - t0;
  char tail;
  ssize_t at_end = read(fd, &tail, 1); /* MAIN_EOF */
  close(fd);

  /* main: C stdio */
  const char* stdio_file = path_in(dir, "stdio.dat");
  FILE* f = fopen(stdio_file, "w");
  if (!f) fail("fopen");
  t0 = now_s();
  for (int i = 0; i < mb; ++i)
    if (fwrite(buf, 1, BLOCK, f) != BLOCK) fail("fwrite"); /* STDIO_WRITE */
  double stdio_write = now_s() - t0;
  fclose(f);
  f = fopen(stdio_file, "r");
  if (!f) fail("fopen");
  t0 = now_s();
  for (int i = 0; i < mb; ++i)
    if (fread(buf, BLOCK, 1, f) != 1) fail("fread"); /* STDIO_READ */
  double stdio_read = now_s() - t0;
  sum += checksum(buf, BLOCK);
  fclose(f);

  /* a parallel region: each thread its own file, pwrite() then pread() */
  double par_write = 0, par_read = 0;
  int per_thread = mb / 2 > 0 ? mb / 2 : 1;
#pragma omp parallel num_threads(2) reduction(+ : par_write, par_read) /* PAR */
  {
    char path[4096]; /* the thread's own: path_in's buffers are not for threads */
    snprintf(path, sizeof path, "%s/thread-%d.dat", dir, omp_get_thread_num());
    char* mine = malloc(BLOCK);
    memcpy(mine, buf, BLOCK);
    int tfd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
    if (tfd < 0 || !mine) fail("open");
    double s0 = now_s();
    for (int i = 0; i < per_thread; ++i)
      if (pwrite(tfd, mine, BLOCK, (off_t)i * BLOCK) != BLOCK) fail("pwrite"); /* PAR_WRITE */
    par_write += now_s() - s0;
    s0 = now_s();
    for (int i = 0; i < per_thread; ++i)
      if (pread(tfd, mine, BLOCK, (off_t)i * BLOCK) != BLOCK) fail("pread"); /* PAR_READ */
    par_read += now_s() - s0;
    close(tfd);
    unlink(path);
    free(mine);
  }

  /* what the calls return and leave in errno, with and without the tool */
  errno = 0;
  int missing = open(path_in(dir, "no-such-file"), O_RDONLY);
  int open_errno = errno;
  errno = 0;
  ssize_t bad = read(-1, &tail, 1); /* not a descriptor (a closed one may be the tool's now) */
  int read_errno = errno;
  int devnull = open("/dev/null", O_WRONLY);
  errno = 0;
  struct iovec one = {"x", 1};
  ssize_t wrote = writev(devnull, &one, 1);
  int write_errno = errno;
  close(devnull);
  printf("open missing: %d errno %d\n", missing, open_errno);
  printf("read bad fd: %zd errno %d\n", bad, read_errno);
  printf("writev /dev/null: %zd errno %d\n", wrote, write_errno);
  printf("read at end of file: %zd\n", at_end);
  printf("checksum %lu\n", sum);

  unlink(main_file);
  unlink(stdio_file);
  rmdir(dir);
  free(buf);
  print_truth("main_write", main_write);
  print_truth("main_read", main_read);
  print_truth("stdio_write", stdio_write);
  print_truth("stdio_read", stdio_read);
  print_truth("par_write", par_write);
  print_truth("par_read", par_read);
  print_truth("main_bytes", (double)mb * BLOCK);
  print_truth("par_bytes", (double)per_thread * BLOCK);
  return status;
}
