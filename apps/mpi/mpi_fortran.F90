! mpi_fortran: a Fortran program with planted MPI overheads, to check that Fortran calls are
! measured (Open MPI's Fortran bindings call PMPI_ directly: libscalea-mpi.so wraps mpi_xxx_ and
! mpi_xxx_f08_ itself). Built twice: `use mpi` (mpi_fortran), and with -DUSE_MPI_F08 `use mpi_f08`
! (mpi_fortran_f08: handles are derived types, and MPI_SEND and MPI_FINALIZE are called without
! their optional error argument).
!   the last rank works 0.2 s before MPI_BARRIER (the others wait);
!   rank 0 sends rank 1 N=2048 double precision values, 4 times;
!   MPI_ALLREDUCE of 100 double precision values, 10 times.
program mpi_fortran
#ifdef USE_MPI_F08
  use mpi_f08
#else
  use mpi
#endif
  implicit none
  integer, parameter :: n = 2048
  integer :: ierr, rank, nranks, k
#ifdef USE_MPI_F08
  type(MPI_Status) :: status
  character(len=*), parameter :: binding = 'use mpi_f08'
#else
  integer :: status(MPI_STATUS_SIZE)
  character(len=*), parameter :: binding = 'use mpi'
#endif
  double precision :: buf(n), a(100), b(100)
  real :: scale
  character(len=32) :: arg

  scale = 1.0
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) scale
  end if
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
  buf = 1.0d0
  a = rank
  if (rank == nranks - 1) call sleep_s(0.2 * scale)
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  if (nranks >= 2) then
    do k = 1, 4
      if (rank == 0) then
#ifdef USE_MPI_F08
        call MPI_SEND(buf, n, MPI_DOUBLE_PRECISION, 1, 5, MPI_COMM_WORLD)
#else
        call MPI_SEND(buf, n, MPI_DOUBLE_PRECISION, 1, 5, MPI_COMM_WORLD, ierr)
#endif
      else if (rank == 1) then
        call MPI_RECV(buf, n, MPI_DOUBLE_PRECISION, 0, 5, MPI_COMM_WORLD, status, ierr)
      end if
    end do
  end if
  do k = 1, 10
    call MPI_ALLREDUCE(a, b, 100, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  if (rank == 0) print '(a,a,a,i0,a,f8.1)', 'mpi_fortran (', binding, '): ', nranks, ' ranks, b(1) ', b(1)
#ifdef USE_MPI_F08
  call MPI_FINALIZE()
#else
  call MPI_FINALIZE(ierr)
#endif
contains
  subroutine sleep_s(s)
    real, intent(in) :: s
    integer(8) :: c0, c1, rate
    call system_clock(c0, rate)
    do
      call system_clock(c1)
      if (real(c1 - c0) / real(rate) >= s) exit
      call sleep_tick()
    end do
  end subroutine
  subroutine sleep_tick()
    interface
      integer(c_int) function usleep(us) bind(c, name='usleep')
        use iso_c_binding, only: c_int
        integer(c_int), value :: us
      end function
    end interface
    integer :: rc
    rc = usleep(1000)
  end subroutine
end program mpi_fortran
