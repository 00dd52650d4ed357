! mop_fortran_sentinels.f90 - tells the Fortran shims of libmpi_overlap
! (mop_fortran.c) where the MPI's Fortran sentinels live and how .TRUE. and
! .FALSE. are stored. Compiled with the MPI's own Fortran compiler wrapper and
! mpif.h, so the addresses are those of the variables (common blocks) that an
! application's MPI_IN_PLACE, MPI_BOTTOM, MPI_STATUS_IGNORE... refer to: the
! dynamic linker binds every reference to one definition. bind(C) gives this
! routine a name C can call whatever the compiler's name mangling; the routine
! it calls is defined in C under every common mangling.
subroutine mop_f_record() bind(C, name="mop_f_record")
  implicit none
  include 'mpif.h'
  logical :: t, f
  external mop_f_record_sentinels
  t = .true.
  f = .false.
  call mop_f_record_sentinels(MPI_IN_PLACE, MPI_BOTTOM, MPI_STATUS_IGNORE, &
                              MPI_STATUSES_IGNORE, MPI_ERRCODES_IGNORE, &
                              MPI_STATUS_SIZE, t, f)
end subroutine mop_f_record
