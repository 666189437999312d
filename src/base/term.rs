//! What the terminal takes: colour, cursor control and width, decided in
//! one place for every text output (the verdict's colours and width, the
//! progress bar, the bars of the text reports).
//!
//! - Colour: only on a terminal (a TTY) whose `TERM` is set and not `dumb`,
//!   and not with `NO_COLOR` set (https://no-color.org).
//! - Cursor control (a progress bar redrawn in place): only on a TTY whose
//!   `TERM` is set and not `dumb`; otherwise progress is plain lines.
//! - Width: `COLUMNS` when set (a positive number), and the terminal's own
//!   width when the stream is a TTY: the smaller of the two, so output fits
//!   both what the user asked and the window; None when neither says.
//!   Layouts keep a floor ([`BAR_FLOOR`] for a line that holds a bar) below
//!   which they would stop being readable.

/// The narrowest a line holding a bar (the progress bar, the thread-count
/// curve) is laid out to: below this its text would not fit.
pub const BAR_FLOOR: usize = 40;

/// Whether `TERM` names a terminal that takes escape sequences (set, not
/// empty, not `dumb`).
pub fn term_capable() -> bool {
    std::env::var_os("TERM").is_some_and(|t| !t.is_empty() && t != "dumb")
}

/// Whether `NO_COLOR` is set (and not empty).
pub fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// Whether descriptor `fd` is a terminal.
pub fn is_tty(fd: i32) -> bool {
    // SAFETY: isatty only inspects the descriptor.
    unsafe { libc::isatty(fd) == 1 }
}

/// Colour on `fd`: a TTY, a capable `TERM`, no `NO_COLOR`.
pub fn color(fd: i32) -> bool {
    is_tty(fd) && term_capable() && !no_color()
}

/// Cursor control on `fd` (redrawing a line in place): a TTY and a
/// capable `TERM`.
pub fn cursor(fd: i32) -> bool {
    is_tty(fd) && term_capable()
}

/// `COLUMNS`, when it is a positive number.
pub fn columns_env() -> Option<usize> {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0)
}

/// The width of the terminal `fd` is, when it is one that says.
pub fn tty_width(fd: i32) -> Option<usize> {
    if !is_tty(fd) {
        return None;
    }
    // SAFETY: ws is a valid winsize the kernel fills in.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut ws) } == 0;
    (ok && ws.ws_col > 0).then_some(ws.ws_col as usize)
}

/// The width output on `fd` must fit: the smaller of `COLUMNS` and the
/// terminal's width, whichever are known.
pub fn width(fd: i32) -> Option<usize> {
    min_known(columns_env(), tty_width(fd))
}

fn min_known(a: Option<usize>, b: Option<usize>) -> Option<usize> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

/// How many columns a bar may take in a line of `width` columns (None:
/// unknown, `default` is used) whose other text takes `used`: what is
/// left, at least `min`, at most `max`. The line then fits `width` unless
/// that is below `used + min` (the floor).
pub fn bar_columns(width: Option<usize>, used: usize, min: usize, max: usize) -> usize {
    match width {
        Some(w) => w.saturating_sub(used).clamp(min, max),
        None => max,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smaller_known_width_and_bars_within_it() {
        assert_eq!(min_known(Some(10), Some(150)), Some(10));
        assert_eq!(min_known(None, Some(150)), Some(150));
        assert_eq!(min_known(Some(90), None), Some(90));
        assert_eq!(min_known(None, None), None);
        assert_eq!(bar_columns(Some(100), 30, 5, 40), 40);
        assert_eq!(bar_columns(Some(50), 30, 5, 40), 20);
        assert_eq!(bar_columns(Some(10), 30, 5, 40), 5);
        assert_eq!(bar_columns(None, 30, 5, 40), 40);
    }
}
