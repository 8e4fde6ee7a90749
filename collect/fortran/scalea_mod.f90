! scalea user-region API for Fortran:
!   use scalea
!   call scalea_begin("solve")            ! or scalea_begin("solve", __FILE__, __LINE__) with cpp
!   ...
!   call scalea_end("solve")
!   call scalea_measure_off() / scalea_measure_on()
module scalea
  use, intrinsic :: iso_c_binding, only: c_char, c_int, c_null_char, c_null_ptr, c_ptr, c_loc
  implicit none
  private
  public :: scalea_begin, scalea_end, scalea_measure_on, scalea_measure_off

  interface
    subroutine c_begin(name, file, line, func) bind(C, name="scalea_region_begin_loc")
      import :: c_char, c_int
      character(kind=c_char), dimension(*), intent(in) :: name, file, func
      integer(c_int), value :: line
    end subroutine
    subroutine c_end(name) bind(C, name="scalea_region_end")
      import :: c_char
      character(kind=c_char), dimension(*), intent(in) :: name
    end subroutine
    subroutine c_enable() bind(C, name="scalea_measure_enable")
    end subroutine
    subroutine c_disable() bind(C, name="scalea_measure_disable")
    end subroutine
  end interface

contains

  subroutine scalea_begin(name, file, line)
    character(len=*), intent(in) :: name
    character(len=*), intent(in), optional :: file
    integer, intent(in), optional :: line
    integer(c_int) :: l
    l = 0
    if (present(line)) l = int(line, c_int)
    if (present(file)) then
      call c_begin(trim(name) // c_null_char, trim(file) // c_null_char, l, c_null_char)
    else
      call c_begin(trim(name) // c_null_char, c_null_char, l, c_null_char)
    end if
  end subroutine

  subroutine scalea_end(name)
    character(len=*), intent(in) :: name
    call c_end(trim(name) // c_null_char)
  end subroutine

  subroutine scalea_measure_on()
    call c_enable()
  end subroutine

  subroutine scalea_measure_off()
    call c_disable()
  end subroutine
end module scalea
