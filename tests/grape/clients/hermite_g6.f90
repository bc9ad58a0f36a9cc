! The Hermite client of hermite_g6.c in Fortran, through the GRAPE-6 library's Fortran names
! (every argument by reference, arrays x(3,n)): the same algorithm step for step, so that its
! energy error equals the C client's.
!   hermite_g6_f INPUT T_END ETA DT_MAX EPS
program hermite_g6_f
  implicit none
  integer, external :: g6_open, g6_close, g6_npipes, g6_set_ti, g6_set_j_particle, g6calc_lasthalf2
  character(len=256) :: arg
  integer :: n, i, k, d, cnt, ni, first, ierr, cid, nj
  double precision :: t_end, eta, dt_max, eps, eps2, t_next, h, h2d, h3, h4, h5, e0, e1, dtn, num, den
  double precision, allocatable :: x(:,:), v(:,:), a(:,:), j(:,:), xp(:,:), vp(:,:), a1(:,:), j1(:,:)
  double precision, allocatable :: m(:), t(:), dt(:), pot(:), hh(:), xi(:,:), vi(:,:), ai(:,:), ji(:,:), pi(:)
  double precision :: zero(3), a2(3), j6(3), k18(3), s2(3), s3(3), s2e(3), tj
  integer, allocatable :: active(:), idx(:), nn(:)
  integer(8) :: blocks, steps

  call get_command_argument(1, arg)
  open(10, file=trim(arg), status='old')
  read(10, *) n
  call get_command_argument(2, arg); read(arg, *) t_end
  call get_command_argument(3, arg); read(arg, *) eta
  call get_command_argument(4, arg); read(arg, *) dt_max
  call get_command_argument(5, arg); read(arg, *) eps
  eps2 = eps * eps
  allocate(x(3,n), v(3,n), a(3,n), j(3,n), xp(3,n), vp(3,n), a1(3,n), j1(3,n))
  allocate(m(n), t(n), dt(n), pot(n), hh(n), active(n), idx(n), nn(n))
  allocate(xi(3,n), vi(3,n), ai(3,n), ji(3,n), pi(n))
  do i = 1, n
    read(10, *) m(i), x(:,i), v(:,i)
  end do
  close(10)
  hh = 0d0
  zero = 0d0
  cid = 0
  ierr = g6_open(cid)
  nj = n
  tj = 0d0
  do i = 1, n
    t(i) = 0d0
    ierr = g6_set_j_particle(cid, i - 1, i - 1, tj, tj, m(i), zero, zero, zero, v(:,i), x(:,i))
  end do
  ierr = g6_set_ti(cid, tj)
  do i = 1, n
    active(i) = i
  end do
  call forces(n, x, v)
  e0 = 0d0
  do i = 1, n
    a(:,i) = a1(:,i)
    j(:,i) = j1(:,i)
    e0 = e0 + 0.5d0 * m(i) * sum(v(:,i)**2) + 0.5d0 * m(i) * pot(i)
    if (norm2(j(:,i)) > 0) then
      dt(i) = block_step_size(0.01d0 * norm2(a(:,i)) / norm2(j(:,i)), dt_max, 0d0)
    else
      dt(i) = block_step_size(dt_max, dt_max, 0d0)
    end if
    a2 = a(:,i) / 2
    j6 = j(:,i) / 6
    ierr = g6_set_j_particle(cid, i - 1, i - 1, tj, dt(i), m(i), zero, j6, a2, v(:,i), x(:,i))
  end do
  blocks = 0
  steps = 0
  do
    t_next = minval(t + dt)
    if (t_next > t_end) exit
    cnt = 0
    do i = 1, n
      if (t(i) + dt(i) == t_next) then
        cnt = cnt + 1
        active(cnt) = i
      end if
    end do
    ierr = g6_set_ti(cid, t_next)
    do k = 1, cnt
      i = active(k)
      h = t_next - t(i)
      h2d = h * h / 2
      h3 = h2d * h / 3
      xp(:,i) = x(:,i) + h * v(:,i) + h2d * a(:,i) + h3 * j(:,i)
      vp(:,i) = v(:,i) + h * a(:,i) + h2d * j(:,i)
    end do
    call forces(cnt, xp, vp)
    do k = 1, cnt
      i = active(k)
      h = dt(i)
      h3 = h * h * h
      h4 = h3 * h
      h5 = h4 * h
      do d = 1, 3
        s2(d) = (-6 * (a(d,i) - a1(d,i)) - h * (4 * j(d,i) + 2 * j1(d,i))) / (h * h)
        s3(d) = (12 * (a(d,i) - a1(d,i)) + 6 * h * (j(d,i) + j1(d,i))) / h3
        x(d,i) = xp(d,i) + s2(d) * h4 / 24 + s3(d) * h5 / 120
        v(d,i) = vp(d,i) + s2(d) * h3 / 6 + s3(d) * h4 / 24
        a(d,i) = a1(d,i)
        j(d,i) = j1(d,i)
        s2e(d) = s2(d) + h * s3(d)
      end do
      t(i) = t_next
      num = norm2(a(:,i)) * norm2(s2e) + norm2(j(:,i))**2
      den = norm2(j(:,i)) * norm2(s3) + norm2(s2e)**2
      if (den > 0) then
        dtn = sqrt(eta * num / den)
      else
        dtn = dt_max
      end if
      dt(i) = block_step_size(min(dtn, 2 * h), dt_max, t_next)
      a2 = a(:,i) / 2
      j6 = j(:,i) / 6
      k18 = s2e / 18
      ierr = g6_set_j_particle(cid, i - 1, i - 1, t_next, dt(i), m(i), k18, j6, a2, v(:,i), x(:,i))
    end do
    blocks = blocks + 1
    steps = steps + cnt
  end do
  ierr = g6_set_ti(cid, t_end)
  do i = 1, n
    active(i) = i
  end do
  call forces(n, x, v)
  e1 = 0d0
  do i = 1, n
    e1 = e1 + 0.5d0 * m(i) * sum(v(:,i)**2) + 0.5d0 * m(i) * pot(i)
  end do
  ierr = g6_close(cid)
  write(*, '(es13.6, 2i12)') (e1 - e0) / e0, blocks, steps

contains

  double precision function block_step_size(dtx, limit, tx)
    double precision, intent(in) :: dtx, limit, tx
    double precision :: b
    b = limit
    do while (b > dtx .and. b >= 2d0**(-40))
      b = b * 0.5d0
    end do
    do while (mod(tx, b) /= 0 .and. b >= 2d0**(-40))
      b = b * 0.5d0
    end do
    block_step_size = b
  end function

  ! Forces on active(1:count) at positions xs, velocities vs, in chunks of the library's pipes.
  subroutine forces(count, xs, vs)
    integer, intent(in) :: count
    double precision, intent(in) :: xs(3,n), vs(3,n)
    integer :: np, kk, ii
    np = g6_npipes()
    do first = 1, count, np
      ni = min(np, count - first + 1)
      do kk = 1, ni
        ii = active(first + kk - 1)
        idx(kk) = ii - 1
        xi(:,kk) = xs(:,ii)
        vi(:,kk) = vs(:,ii)
      end do
      call g6calc_firsthalf(cid, nj, ni, idx, xi, vi, ai, ji, pi, eps2, hh)
      ierr = g6calc_lasthalf2(cid, nj, ni, idx, xi, vi, eps2, hh, ai, ji, pi, nn)
      do kk = 1, ni
        ii = active(first + kk - 1)
        a1(:,ii) = ai(:,kk)
        j1(:,ii) = ji(:,kk)
        pot(ii) = pi(kk)
      end do
    end do
  end subroutine

end program
