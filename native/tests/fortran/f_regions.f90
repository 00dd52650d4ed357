! f_regions.f90 - the region API and MPI_PCONTROL from Fortran (mpif.h), 2
! ranks, ITERS = 10. Linked with libmpi_overlap (the region routines live
! there). Regions:
!   'exchange'  ITERS x 64 KiB MPI_IRECV + MPI_ISEND, 2 ms computation,
!               MPI_WAITALL; inside it
!   'inner'     ITERS x 8 B MPI_SENDRECV (two transfers each)
!   'solo'      3 ms of computation, no MPI; begun as 'solo   ' (trailing
!               blanks are no part of a Fortran name) and ended as 'solo'
! then ITERS x { MPI_PCONTROL(0); 8 B MPI_SENDRECV; MPI_PCONTROL(1) }: the
! Sendrecv's two transfers are not monitored.
program f_regions
  implicit none
  include 'mpif.h'
  integer, parameter :: iters = 10, n = 8192
  double precision :: s(n), r(n), s1(1), r1(1)
  integer :: rank, peer, ierr, it, reqs(2)

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  peer = 1 - rank

  call mpi_overlap_region_begin('exchange')
  do it = 1, iters
    s = it
    call MPI_IRECV(r, n, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_ISEND(s, n, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, reqs(2), ierr)
    call mop_spin(0.002d0)
    call MPI_WAITALL(2, reqs, MPI_STATUSES_IGNORE, ierr)
    call mop_check(all(r == it), 'exchange data')
  end do
  call mpi_overlap_region_begin('inner')
  do it = 1, iters
    s1 = rank
    call MPI_SENDRECV(s1, 1, MPI_DOUBLE_PRECISION, peer, 2, r1, 1, MPI_DOUBLE_PRECISION, &
                      peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call mop_check(r1(1) == peer, 'inner data')
  end do
  call mpi_overlap_region_end('inner')
  call mpi_overlap_region_end('exchange')

  call mpi_overlap_region_begin('solo   ')
  call mop_spin(0.003d0)
  call mpi_overlap_region_end('solo')

  do it = 1, iters
    call MPI_PCONTROL(0)
    s1 = rank
    call MPI_SENDRECV(s1, 1, MPI_DOUBLE_PRECISION, peer, 3, r1, 1, MPI_DOUBLE_PRECISION, &
                      peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_PCONTROL(1)
  end do

  call MPI_FINALIZE(ierr)
end program f_regions
