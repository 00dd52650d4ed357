! mop_spin.f90 - computation of a known length for the Fortran test programs:
! a busy loop on the Fortran clock (no MPI call, so it is computation to the
! profiler).
subroutine mop_spin(seconds)
  implicit none
  double precision, intent(in) :: seconds
  integer(kind=8) :: t0, t1, rate
  call system_clock(t0, rate)
  do
    call system_clock(t1)
    if (dble(t1 - t0) / dble(rate) >= seconds) exit
  end do
end subroutine mop_spin

! Ends the program with status 1 and a message when a check fails.
subroutine mop_check(ok, what)
  implicit none
  logical, intent(in) :: ok
  character(len=*), intent(in) :: what
  if (.not. ok) then
    write (0, '(a,a)') 'check failed: ', what
    error stop 1
  end if
end subroutine mop_check
