! f08_p2p.f90 - the mpi_f08 bindings under the profiler, 2 ranks, ITERS = 10:
!   A  64 KiB MPI_Irecv + MPI_Isend, 5 ms computation, MPI_Waitall with
!      statuses (checked)                               -> max = xfer
!   B  8 B MPI_Irecv + MPI_Isend, MPI_Waitany twice with MPI_STATUS_IGNORE,
!      then once more (no active request: MPI_UNDEFINED)
!   C  8 B MPI_Irecv + MPI_Isend, MPI_Test on each until its LOGICAL flag
!   D  MPI_Allreduce of 4 doubles with MPI_IN_PLACE (checked)
! Most calls leave out the optional ierror, as f08 programs do.
program f08_p2p
  use mpi_f08
  implicit none
  integer, parameter :: iters = 10, na = 8192, m = 4
  double precision :: sa(na), ra(na), s1(1), r1(1), v(m)
  integer :: rank, nprocs, peer, ierr, it, idx, first
  type(MPI_Request) :: reqs(2)
  type(MPI_Status) :: statuses(2)
  logical :: flag

  call MPI_Init(ierr)
  call mop_check(ierr == MPI_SUCCESS, 'init ierror')
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  call mop_check(nprocs == 2, 'run with 2 ranks')
  peer = 1 - rank

  do it = 1, iters
    sa = rank * 1000 + it
    call MPI_Irecv(ra, na, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, reqs(1))
    call MPI_Isend(sa, na, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, reqs(2))
    call mop_spin(0.005d0)
    call MPI_Waitall(2, reqs, statuses)
    call mop_check(statuses(1)%MPI_SOURCE == peer .and. statuses(1)%MPI_TAG == 1, 'A: status')
    call mop_check(reqs(1) == MPI_REQUEST_NULL, 'A: request null')
    call mop_check(all(ra == peer * 1000 + it), 'A: data')
  end do

  do it = 1, iters
    s1 = rank * 1000 + it
    call MPI_Irecv(r1, 1, MPI_DOUBLE_PRECISION, peer, 2, MPI_COMM_WORLD, reqs(1))
    call MPI_Isend(s1, 1, MPI_DOUBLE_PRECISION, peer, 2, MPI_COMM_WORLD, reqs(2))
    call MPI_Waitany(2, reqs, idx, MPI_STATUS_IGNORE)
    call mop_check(idx == 1 .or. idx == 2, 'B: first index')
    first = idx
    call MPI_Waitany(2, reqs, idx, MPI_STATUS_IGNORE)
    call mop_check((idx == 1 .or. idx == 2) .and. idx /= first, 'B: second index')
    call MPI_Waitany(2, reqs, idx, MPI_STATUS_IGNORE)
    call mop_check(idx == MPI_UNDEFINED, 'B: none left')
    call mop_check(r1(1) == peer * 1000 + it, 'B: data')
  end do

  do it = 1, iters
    s1 = rank * 1000 + it
    call MPI_Irecv(r1, 1, MPI_DOUBLE_PRECISION, peer, 3, MPI_COMM_WORLD, reqs(1))
    call MPI_Isend(s1, 1, MPI_DOUBLE_PRECISION, peer, 3, MPI_COMM_WORLD, reqs(2))
    flag = .false.
    do while (.not. flag)
      call MPI_Test(reqs(1), flag, statuses(1))
    end do
    call mop_check(statuses(1)%MPI_SOURCE == peer, 'C: status')
    flag = .false.
    do while (.not. flag)
      call MPI_Test(reqs(2), flag, MPI_STATUS_IGNORE)
    end do
    call mop_check(r1(1) == peer * 1000 + it, 'C: data')
  end do

  do it = 1, iters
    v = rank + it
    call MPI_Allreduce(MPI_IN_PLACE, v, m, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    call mop_check(ierr == MPI_SUCCESS, 'D: ierror')
    call mop_check(all(v == 1 + 2 * it), 'D: allreduce in place')
  end do

  call MPI_Finalize()
end program f08_p2p
