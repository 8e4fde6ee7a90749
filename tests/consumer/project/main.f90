! Uses the installed Fortran module (scalea-fortran.pc): one region around a short loop.
program consumer
  use scalea
  implicit none
  integer :: i
  real :: s
  call scalea_begin("consumer_fortran_region")
  s = 0
  do i = 1, 1000000
    s = s + sqrt(real(i))
  end do
  call scalea_end("consumer_fortran_region")
  print '(a,l1)', 'consumer: fortran ran ', s > 0
end program consumer
