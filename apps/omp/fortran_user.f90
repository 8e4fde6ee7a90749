! fortran_user: the Fortran user-region module (use scalea).
!
!   fortran_user
!
! Planted truth: region "fsolve" (its file and line given, marked FSOLVE) (1 visit, 60 ms)
! holding region "fstep" (3 visits, 20 ms each);
! then recording is switched off around region "fhidden" (not recorded); then region "fafter"
! (1 visit, 20 ms) after switching it back on.
! Measured truth printed: "truth fstep <s>" (the 3 sleeps), "truth fafter <s>".
program fortran_user
  use, intrinsic :: iso_c_binding, only: c_int
  use scalea
  implicit none
  interface
    integer(c_int) function usleep(us) bind(C, name="usleep")
      import :: c_int
      integer(c_int), value :: us
    end function
  end interface
  integer :: i
  integer(c_int) :: rc
  integer(8) :: c0, c1, rate
  real(8) :: fstep, fafter

  call system_clock(count_rate=rate)
  fstep = 0
  call scalea_begin("fsolve", "fortran_user.f90", 27)  ! FSOLVE
  do i = 1, 3
    call scalea_begin("fstep")
    call system_clock(c0)
    rc = usleep(20000_c_int)
    call system_clock(c1)
    fstep = fstep + real(c1 - c0, 8) / real(rate, 8)
    call scalea_end("fstep")
  end do
  call scalea_end("fsolve")

  call scalea_measure_off()
  call scalea_begin("fhidden")
  rc = usleep(20000_c_int)
  call scalea_end("fhidden")
  call scalea_measure_on()

  call scalea_begin("fafter")
  call system_clock(c0)
  rc = usleep(20000_c_int)
  call system_clock(c1)
  fafter = real(c1 - c0, 8) / real(rate, 8)
  call scalea_end("fafter")
  print '(a)', 'fortran_user: done'
  print '(a,f12.9)', 'truth fstep ', fstep
  print '(a,f12.9)', 'truth fafter ', fafter
end program fortran_user
