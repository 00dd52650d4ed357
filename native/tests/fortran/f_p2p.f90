! f_p2p.f90 - point-to-point coverage of the profiler's Fortran entry points
! (mpif.h), 2 ranks. tests/test_profile_fortran.py checks the counts and
! bounds that follow from these phases (ITERS = 10 iterations each):
!   A  64 KiB MPI_IRECV + MPI_ISEND, 5 ms computation, MPI_WAITALL with
!      statuses (checked with MPI_GET_COUNT)          -> max = xfer
!   B  32 KiB MPI_SEND / MPI_RECV                      -> min = max = 0
!   C  128 KiB persistent MPI_SEND_INIT / MPI_RECV_INIT, MPI_STARTALL,
!      5 ms computation, MPI_WAITALL(MPI_STATUSES_IGNORE) -> max = xfer
!   D  8 B MPI_IRECV + MPI_ISSEND, MPI_WAITANY twice with MPI_STATUS_IGNORE
!   E  8 B MPI_IRECV + MPI_ISEND, MPI_TESTALL until its LOGICAL flag is set
!   F  once: 40 MPI_IRECV + 40 MPI_ISEND of 8 B, one MPI_WAITALL over 80
!      requests (more than the shims keep on the stack)
! Every received value is checked, so a wrong conversion ends the program.
program f_p2p
  implicit none
  include 'mpif.h'
  integer, parameter :: iters = 10, na = 8192, nb = 4096, nc = 16384, nf = 40
  double precision :: sa(na), ra(na), sb(nb), rb(nb), sc(nc), rc(nc), s1(1), r1(1)
  double precision :: sf(nf), rf(nf)
  integer :: rank, nprocs, peer, ierr, it, k, idx, first, cnt
  integer :: reqs(2), preqs(2), freqs(2 * nf)
  integer :: statuses(MPI_STATUS_SIZE, 2), status(MPI_STATUS_SIZE)
  logical :: flag

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  call mop_check(nprocs == 2, 'run with 2 ranks')
  peer = 1 - rank

  ! A
  do it = 1, iters
    sa = rank * 1000 + it
    call MPI_IRECV(ra, na, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_ISEND(sa, na, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, reqs(2), ierr)
    call mop_spin(0.005d0)
    call MPI_WAITALL(2, reqs, statuses, ierr)
    call mop_check(ierr == MPI_SUCCESS, 'A: waitall ierr')
    call mop_check(reqs(1) == MPI_REQUEST_NULL .and. reqs(2) == MPI_REQUEST_NULL, 'A: requests null')
    call mop_check(statuses(MPI_SOURCE, 1) == peer .and. statuses(MPI_TAG, 1) == 1, 'A: status')
    call MPI_GET_COUNT(statuses(1, 1), MPI_DOUBLE_PRECISION, cnt, ierr)
    call mop_check(cnt == na, 'A: get_count')
    call mop_check(all(ra == peer * 1000 + it), 'A: data')
  end do

  ! B
  do it = 1, iters
    sb = rank * 1000 + it
    if (rank == 0) then
      call MPI_SEND(sb, nb, MPI_DOUBLE_PRECISION, peer, 2, MPI_COMM_WORLD, ierr)
      call MPI_RECV(rb, nb, MPI_DOUBLE_PRECISION, peer, 2, MPI_COMM_WORLD, status, ierr)
    else
      call MPI_RECV(rb, nb, MPI_DOUBLE_PRECISION, peer, 2, MPI_COMM_WORLD, status, ierr)
      call MPI_SEND(sb, nb, MPI_DOUBLE_PRECISION, peer, 2, MPI_COMM_WORLD, ierr)
    end if
    call mop_check(status(MPI_SOURCE) == peer .and. status(MPI_TAG) == 2, 'B: status')
    call mop_check(all(rb == peer * 1000 + it), 'B: data')
  end do

  ! C
  call MPI_SEND_INIT(sc, nc, MPI_DOUBLE_PRECISION, peer, 3, MPI_COMM_WORLD, preqs(1), ierr)
  call MPI_RECV_INIT(rc, nc, MPI_DOUBLE_PRECISION, peer, 3, MPI_COMM_WORLD, preqs(2), ierr)
  do it = 1, iters
    sc = rank * 1000 + it
    call MPI_STARTALL(2, preqs, ierr)
    call mop_spin(0.005d0)
    call MPI_WAITALL(2, preqs, MPI_STATUSES_IGNORE, ierr)
    call mop_check(preqs(1) /= MPI_REQUEST_NULL, 'C: persistent request kept')
    call mop_check(all(rc == peer * 1000 + it), 'C: data')
  end do
  call MPI_REQUEST_FREE(preqs(1), ierr)
  call MPI_REQUEST_FREE(preqs(2), ierr)
  call mop_check(preqs(1) == MPI_REQUEST_NULL .and. preqs(2) == MPI_REQUEST_NULL, 'C: freed')

  ! D
  do it = 1, iters
    s1 = rank * 1000 + it
    call MPI_IRECV(r1, 1, MPI_DOUBLE_PRECISION, peer, 4, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_ISSEND(s1, 1, MPI_DOUBLE_PRECISION, peer, 4, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_WAITANY(2, reqs, idx, MPI_STATUS_IGNORE, ierr)
    call mop_check(idx == 1 .or. idx == 2, 'D: first index')
    first = idx
    call MPI_WAITANY(2, reqs, idx, MPI_STATUS_IGNORE, ierr)
    call mop_check((idx == 1 .or. idx == 2) .and. idx /= first, 'D: second index')
    call MPI_WAITANY(2, reqs, idx, MPI_STATUS_IGNORE, ierr)
    call mop_check(idx == MPI_UNDEFINED, 'D: no active request left')
    call mop_check(r1(1) == peer * 1000 + it, 'D: data')
  end do

  ! E
  do it = 1, iters
    s1 = rank * 1000 + it
    call MPI_IRECV(r1, 1, MPI_DOUBLE_PRECISION, peer, 5, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_ISEND(s1, 1, MPI_DOUBLE_PRECISION, peer, 5, MPI_COMM_WORLD, reqs(2), ierr)
    flag = .false.
    do while (.not. flag)
      call MPI_TESTALL(2, reqs, flag, statuses, ierr)
    end do
    call mop_check(statuses(MPI_SOURCE, 1) == peer, 'E: status')
    call mop_check(r1(1) == peer * 1000 + it, 'E: data')
  end do

  ! F
  do k = 1, nf
    sf(k) = rank * 1000 + k
    call MPI_IRECV(rf(k), 1, MPI_DOUBLE_PRECISION, peer, 100 + k, MPI_COMM_WORLD, freqs(k), ierr)
  end do
  do k = 1, nf
    call MPI_ISEND(sf(k), 1, MPI_DOUBLE_PRECISION, peer, 100 + k, MPI_COMM_WORLD, freqs(nf + k), ierr)
  end do
  call MPI_WAITALL(2 * nf, freqs, MPI_STATUSES_IGNORE, ierr)
  call mop_check(all(freqs == MPI_REQUEST_NULL), 'F: requests null')
  do k = 1, nf
    call mop_check(rf(k) == peer * 1000 + k, 'F: data')
  end do

  call MPI_FINALIZE(ierr)
end program f_p2p
