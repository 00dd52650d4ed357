! f_halo.f90 - an ordinary Fortran 90 MPI program, with nothing in it for the
! profiler: Jacobi iterations for Laplace's equation on a 2-D grid split into
! column blocks, one per rank (1-D decomposition). Each step posts the ghost
! column exchange with MPI_IRECV / MPI_ISEND, updates the interior columns
! while the messages travel, waits with MPI_WAITALL, then updates the two
! boundary columns; every 10 steps the residual is summed with MPI_ALLREDUCE.
! Ranks at the ends exchange with MPI_PROC_NULL.
!
! Usage: f_halo [STEPS [ROWS [COLUMNS_PER_RANK]]]  (defaults 100 4096 256)
program f_halo
  use mpi
  implicit none
  integer :: steps, ny, nxl
  double precision, allocatable :: u(:, :), unew(:, :)
  integer :: rank, nprocs, left, right, ierr, step, j
  integer :: reqs(4)
  double precision :: local_res, res
  character(len=32) :: arg

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)

  steps = 100
  ny = 4096
  nxl = 256
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) steps
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) ny
  end if
  if (command_argument_count() >= 3) then
    call get_command_argument(3, arg)
    read (arg, *) nxl
  end if

  left = rank - 1
  right = rank + 1
  if (left < 0) left = MPI_PROC_NULL
  if (right >= nprocs) right = MPI_PROC_NULL

  allocate (u(0:ny + 1, 0:nxl + 1), unew(0:ny + 1, 0:nxl + 1))
  u = 0
  if (rank == 0) u(:, 0) = 1           ! hot left wall
  unew = u

  do step = 1, steps
    call MPI_IRECV(u(0, 0), ny + 2, MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_IRECV(u(0, nxl + 1), ny + 2, MPI_DOUBLE_PRECISION, right, 2, MPI_COMM_WORLD, &
                   reqs(2), ierr)
    call MPI_ISEND(u(0, 1), ny + 2, MPI_DOUBLE_PRECISION, left, 2, MPI_COMM_WORLD, reqs(3), ierr)
    call MPI_ISEND(u(0, nxl), ny + 2, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD, &
                   reqs(4), ierr)

    local_res = 0
    do j = 2, nxl - 1
      call relax(j)
    end do

    call MPI_WAITALL(4, reqs, MPI_STATUSES_IGNORE, ierr)
    if (rank == 0) u(:, 0) = 1

    call relax(1)
    call relax(nxl)
    u(1:ny, 1:nxl) = unew(1:ny, 1:nxl)

    if (mod(step, 10) == 0) then
      call MPI_ALLREDUCE(local_res, res, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
      if (rank == 0 .and. step == steps) write (*, '(a,i0,a,es12.5)') 'step ', step, &
          ' residual ', sqrt(res)
    end if
  end do

  deallocate (u, unew)
  call MPI_FINALIZE(ierr)

contains

  subroutine relax(col)
    integer, intent(in) :: col
    integer :: i
    double precision :: d
    do i = 1, ny
      unew(i, col) = 0.25d0 * (u(i - 1, col) + u(i + 1, col) + u(i, col - 1) + u(i, col + 1))
      d = unew(i, col) - u(i, col)
      local_res = local_res + d * d
    end do
  end subroutine relax

end program f_halo
