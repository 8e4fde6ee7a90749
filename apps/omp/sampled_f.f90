! sampled_f: CPU work in two Fortran subroutines, for call-path sampling (docs/sampling.md,
! docs/groundtruth.md).
!
!   sampled_f [MS=200]
!
! heavy runs MS ms of CPU time, light MS/2 (each until cpu_time has advanced that much); built
! at -O2. Truth printed: truth cpu_heavy, cpu_light (as the program measured them).
module sampled_work
  implicit none
contains
  subroutine heavy(seconds, used)
    real(8), intent(in) :: seconds
    real(8), intent(out) :: used
    call spin(seconds, used)
  end subroutine heavy

  subroutine light(seconds, used)
    real(8), intent(in) :: seconds
    real(8), intent(out) :: used
    call spin(seconds, used)
  end subroutine light

  ! Inlined into its callers at -O2 (a contained procedure of the module): the samples land in
  ! heavy and light themselves.
  subroutine spin(seconds, used)
    real(8), intent(in) :: seconds
    real(8), intent(out) :: used
    real(8) :: start, now, sink
    integer :: i
    sink = 0
    call cpu_time(start)
    now = start
    do while (now - start < seconds)
      do i = 1, 2000
        sink = sink * 0.999d0 + dble(i)
      end do
      call cpu_time(now)
    end do
    if (sink < 0) print *, sink
    used = now - start
  end subroutine spin
end module sampled_work

program sampled_f
  use sampled_work
  implicit none
  real(8) :: ms, a, b
  character(len=32) :: arg
  ms = 200
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) ms
  end if
  call heavy(ms * 1d-3, a)
  call light(ms * 0.5d-3, b)
  write (*, '(a, f12.9)') 'truth cpu_heavy ', a
  write (*, '(a, f12.9)') 'truth cpu_light ', b
end program sampled_f
