! f_coll.f90 - collective coverage of the profiler's Fortran entry points
! (use mpi), 2 ranks, ITERS = 10 iterations of each:
!   MPI_BCAST of 1024 doubles from rank 0
!   MPI_ALLREDUCE of 4 doubles with MPI_IN_PLACE
!   MPI_REDUCE of 4 doubles to rank 0, MPI_IN_PLACE on the root
!   MPI_IALLREDUCE of 1024 doubles, 5 ms computation, MPI_WAIT(MPI_STATUS_IGNORE)
!   MPI_BARRIER
! and once MPI_BCAST(MPI_BOTTOM, 1, t) with t a datatype of absolute
! addresses. Every result is checked: a Fortran MPI_IN_PLACE or MPI_BOTTOM
! passed to C as an ordinary buffer gives wrong sums or data, and the program
! ends with status 1. tests/test_profile_fortran.py checks the counts.
program f_coll
  use mpi
  implicit none
  integer, parameter :: iters = 10, n = 1024, m = 4
  double precision :: b(n), v(m), w(m), s(n), r(n), bot(n)
  integer :: rank, nprocs, ierr, it, req, t
  integer :: lens(1)
  integer(kind=MPI_ADDRESS_KIND) :: disps(1)

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  call mop_check(nprocs == 2, 'run with 2 ranks')

  do it = 1, iters
    b = -1
    if (rank == 0) b = it
    call MPI_BCAST(b, n, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
    call mop_check(all(b == it), 'bcast data')
  end do

  do it = 1, iters
    v = rank + it
    call MPI_ALLREDUCE(MPI_IN_PLACE, v, m, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    call mop_check(all(v == 1 + 2 * it), 'allreduce in place')
  end do

  do it = 1, iters
    v = rank + it
    if (rank == 0) then
      call MPI_REDUCE(MPI_IN_PLACE, v, m, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
      call mop_check(all(v == 1 + 2 * it), 'reduce in place')
    else
      call MPI_REDUCE(v, w, m, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
    end if
  end do

  do it = 1, iters
    s = rank + it
    call MPI_IALLREDUCE(s, r, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, req, ierr)
    call mop_spin(0.005d0)
    call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
    call mop_check(req == MPI_REQUEST_NULL, 'iallreduce request null')
    call mop_check(all(r == 1 + 2 * it), 'iallreduce data')
  end do

  do it = 1, iters
    call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  end do

  bot = -1
  if (rank == 0) bot = 42
  lens(1) = n
  call MPI_GET_ADDRESS(bot, disps(1), ierr)
  call MPI_TYPE_CREATE_HINDEXED(1, lens, disps, MPI_DOUBLE_PRECISION, t, ierr)
  call MPI_TYPE_COMMIT(t, ierr)
  call MPI_BCAST(MPI_BOTTOM, 1, t, 0, MPI_COMM_WORLD, ierr)
  call mop_check(all(bot == 42), 'bcast from MPI_BOTTOM')
  call MPI_TYPE_FREE(t, ierr)
  call mop_check(t == MPI_DATATYPE_NULL, 'type freed')

  call MPI_FINALIZE(ierr)
end program f_coll
