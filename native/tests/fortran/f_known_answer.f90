! f_known_answer.f90 - the known-answer programs of native/tests/known_answer.c
! in Fortran (mpif.h), for tests/test_known_answer.py on the toolchains with a
! Fortran compiler. 2 ranks; the first argument is the mode (default
! late-sender), the second the number of iterations (default 10), the third
! the message's bytes (default and most 4096: an MPI that sends 4 KiB by
! rendezvous is asked the early-data question at a size it sends eagerly):
!   late-sender  a barrier; rank 1 computes 5 ms, then MPI_SEND of 4 KiB;
!                rank 0 posts MPI_RECV at once: it waits about 5 ms each time
!   early-data   a barrier; rank 1 computes 0.5 ms, then MPI_SEND of 4 KiB;
!                rank 0 computes 5 ms, then MPI_RECV: the data moved while it
!                computed
! Each rank writes its own MPI_WTIME measurements, one per iteration (rank 0:
! its MPI_RECV times; rank 1: its computation and MPI_SEND times), as one JSON
! object to known_answer.rank-<rank>.json, as the C program does.
program f_known_answer
  implicit none
  include 'mpif.h'
  integer, parameter :: nbytes = 4096, max_iters = 1000
  character(len=1) :: buf(nbytes)
  character(len=32) :: mode, arg, path
  integer :: rank, nprocs, ierr, it, iters, msg_bytes
  integer :: status(MPI_STATUS_SIZE)
  double precision :: before_send, before_recv, t0, t1
  double precision :: recv_s(max_iters), comp_s(max_iters), send_s(max_iters)

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  call mop_check(nprocs == 2, 'run with 2 ranks')
  call get_command_argument(1, mode)
  if (len_trim(mode) == 0) mode = 'late-sender'  ! the shims' ctest runs it without arguments
  iters = 10
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) iters
  end if
  call mop_check(iters >= 1 .and. iters <= max_iters, 'iterations: 1 to 1000')
  msg_bytes = nbytes
  if (command_argument_count() >= 3) then
    call get_command_argument(3, arg)
    read (arg, *) msg_bytes
  end if
  call mop_check(msg_bytes >= 0 .and. msg_bytes <= nbytes, 'bytes: 0 to 4096')
  if (mode == 'late-sender') then
    before_send = 0.005d0
    before_recv = 0.0d0
  else if (mode == 'early-data') then
    before_send = 0.0005d0
    before_recv = 0.005d0
  else
    call mop_check(.false., 'mode: late-sender or early-data')
  end if
  buf = 'x'
  recv_s = 0; comp_s = 0; send_s = 0
  do it = 1, iters
    call MPI_BARRIER(MPI_COMM_WORLD, ierr)
    if (rank == 1) then
      t0 = MPI_WTIME()
      call mop_spin(before_send)
      t1 = MPI_WTIME()
      call MPI_SEND(buf, msg_bytes, MPI_CHARACTER, 0, 7, MPI_COMM_WORLD, ierr)
      comp_s(it) = t1 - t0
      send_s(it) = MPI_WTIME() - t1
    else
      if (before_recv > 0) call mop_spin(before_recv)
      t0 = MPI_WTIME()
      call MPI_RECV(buf, msg_bytes, MPI_CHARACTER, 1, 7, MPI_COMM_WORLD, status, ierr)
      recv_s(it) = MPI_WTIME() - t0
      call mop_check(status(MPI_SOURCE) == 1 .and. status(MPI_TAG) == 7, 'status')
    end if
  end do
  write (path, '(a,i0,a)') 'known_answer.rank-', rank, '.json'
  open (unit=11, file=trim(path), status='replace', action='write')
  write (11, '(a,i0,a,a,a)', advance='no') '{"rank": ', rank, ', "mode": "', trim(mode), '"'
  if (rank == 0) then
    call put_series('recv_s', recv_s, iters)
  else
    call put_series('compute_s', comp_s, iters)
    call put_series('send_s', send_s, iters)
  end if
  write (11, '(a)') '}'
  close (11)
  call MPI_FINALIZE(ierr)

contains

  ! , "name": [v1, v2, ...] on the current line of unit 11
  subroutine put_series(name, v, n)
    character(len=*), intent(in) :: name
    double precision, intent(in) :: v(:)
    integer, intent(in) :: n
    integer :: i
    write (11, '(a,a,a)', advance='no') ', "', name, '": ['
    do i = 1, n
      if (i > 1) write (11, '(a)', advance='no') ', '
      write (11, '(es16.9)', advance='no') v(i)
    end do
    write (11, '(a)', advance='no') ']'
  end subroutine put_series
end program f_known_answer
