! f_callsites.f90 - call sites on known lines from Fortran (mpif.h), 2 ranks,
! for tests/test_callsites.py (docs/profiler.md, "Call sites"). The lines
! marked "site: NAME" post and complete the transfers:
!   A  ITERS_A times: MPI_IRECV (irecv-a) and MPI_ISEND (isend-a) of 1 KiB,
!      one MPI_WAITALL (waitall-a) for both;
!   B  ITERS_B times: the same posted from other lines (irecv-b, isend-b),
!      completed by two MPI_WAIT calls (wait-send-b, wait-recv-b).
! Built with -g -O0 (CMakeLists.txt) so that each call keeps its line.
program f_callsites
  implicit none
  include 'mpif.h'
  integer, parameter :: n = 128, iters_a = 5, iters_b = 3
  double precision :: sbuf(n), rbuf(n)
  integer :: rank, peer, ierr, it, rr, sr
  integer :: reqs(2)

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  peer = 1 - rank
  sbuf = rank
  do it = 1, iters_a
    call MPI_IRECV(rbuf, n, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, reqs(1), ierr) ! site: irecv-a
    call MPI_ISEND(sbuf, n, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, reqs(2), ierr) ! site: isend-a
    call MPI_WAITALL(2, reqs, MPI_STATUSES_IGNORE, ierr) ! site: waitall-a
  end do
  do it = 1, iters_b
    call MPI_IRECV(rbuf, n, MPI_DOUBLE_PRECISION, peer, 2, MPI_COMM_WORLD, rr, ierr) ! site: irecv-b
    call MPI_ISEND(sbuf, n, MPI_DOUBLE_PRECISION, peer, 2, MPI_COMM_WORLD, sr, ierr) ! site: isend-b
    call MPI_WAIT(sr, MPI_STATUS_IGNORE, ierr) ! site: wait-send-b
    call MPI_WAIT(rr, MPI_STATUS_IGNORE, ierr) ! site: wait-recv-b
  end do
  call MPI_FINALIZE(ierr)
end program f_callsites
