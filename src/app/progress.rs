//! The progress bar of a measuring command (`run`), on standard error:
//! drawn in place only where the terminal takes it (`base::term::cursor`:
//! a TTY whose `TERM` is set and not `dumb`) and is at least
//! [`BAR_FLOOR`](crate::base::term::BAR_FLOOR) columns wide (the smaller of
//! `COLUMNS` and the window); otherwise the session prints plain lines. Every
//! line of the bar fits that width: the bar shrinks, the message is cut.

use crate::base::term;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};
use std::io::Write as _;

/// Columns of the bar's line besides the bar and the message: the spinner,
/// brackets, percentage, time left and the spaces between.
const FIXED: usize = 21;
/// The least columns left to the message.
const MSG_MIN: usize = 9;

/// The width the bar is drawn in, when it may be drawn at all: cursor
/// control on standard error and at least [`term::BAR_FLOOR`] columns.
pub fn bar_width() -> Option<usize> {
    if !term::cursor(2) {
        return None;
    }
    let w = term::width(2).unwrap_or(80);
    (w >= term::BAR_FLOOR).then_some(w)
}

/// A bar for `total` steps, where standard error takes one ([`bar_width`]);
/// None: print plain lines.
pub fn bar(total: u64) -> Option<ProgressBar> {
    let width = bar_width()?;
    let target = ProgressDrawTarget::term_like(Box::new(Stderr));
    Some(ProgressBar::with_draw_target(Some(total), target).with_style(style(width)))
}

/// The bar's style for a line of `width` columns: a bar of 10 to 30
/// columns, the message filling (and cut to) the rest.
fn style(width: usize) -> ProgressStyle {
    let bar = term::bar_columns(Some(width), FIXED + MSG_MIN + 20, 10, 30);
    ProgressStyle::with_template(&format!(
        "{{spinner}} [{{bar:{bar}}}] {{percent:>3}}% ~{{eta:>3}} left  {{wide_msg}}"
    ))
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ")
}

/// Standard error as indicatif's terminal, as wide as [`bar_width`] says
/// each time it asks (a resized window, a `COLUMNS` below the window).
#[derive(Debug)]
struct Stderr;

impl Stderr {
    fn put(&self, s: &str) -> std::io::Result<()> {
        std::io::stderr().lock().write_all(s.as_bytes())
    }
    fn moved(&self, n: usize, code: char) -> std::io::Result<()> {
        if n == 0 {
            return Ok(());
        }
        self.put(&format!("\x1b[{n}{code}"))
    }
}

impl TermLike for Stderr {
    fn width(&self) -> u16 {
        let w = term::width(2).unwrap_or(80).max(term::BAR_FLOOR);
        u16::try_from(w).unwrap_or(u16::MAX)
    }
    fn move_cursor_up(&self, n: usize) -> std::io::Result<()> {
        self.moved(n, 'A')
    }
    fn move_cursor_down(&self, n: usize) -> std::io::Result<()> {
        self.moved(n, 'B')
    }
    fn move_cursor_right(&self, n: usize) -> std::io::Result<()> {
        self.moved(n, 'C')
    }
    fn move_cursor_left(&self, n: usize) -> std::io::Result<()> {
        self.moved(n, 'D')
    }
    fn write_line(&self, s: &str) -> std::io::Result<()> {
        self.put(&format!("{s}\n"))
    }
    fn write_str(&self, s: &str) -> std::io::Result<()> {
        self.put(s)
    }
    fn clear_line(&self) -> std::io::Result<()> {
        self.put("\r\x1b[2K")
    }
    fn flush(&self) -> std::io::Result<()> {
        std::io::stderr().lock().flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A terminal of a given width that keeps what is drawn on it.
    #[derive(Debug, Clone)]
    struct Capture {
        width: u16,
        text: Arc<Mutex<String>>,
    }

    impl TermLike for Capture {
        fn width(&self) -> u16 {
            self.width
        }
        fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> std::io::Result<()> {
            self.text.lock().unwrap().push_str(&format!("{s}\n"));
            Ok(())
        }
        fn write_str(&self, s: &str) -> std::io::Result<()> {
            self.text.lock().unwrap().push_str(s);
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            self.text.lock().unwrap().push('\n');
            Ok(())
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn every_line_of_the_bar_fits_its_width() {
        for width in [term::BAR_FLOOR, 60, 80, 150] {
            let cap = Capture {
                width: width as u16,
                text: Arc::default(),
            };
            let target = ProgressDrawTarget::term_like(Box::new(cap.clone()));
            let pb = ProgressBar::with_draw_target(Some(1000), target).with_style(style(width));
            pb.set_position(420);
            pb.set_message(format!("latency: {}", "a long message ".repeat(20)));
            pb.tick();
            pb.finish();
            let text = cap.text.lock().unwrap().clone();
            assert!(text.contains('['), "nothing drawn at {width}: {text:?}");
            for line in text.lines() {
                let n = line.chars().count();
                assert!(n <= width, "{n} > {width} columns: {line:?}");
            }
        }
    }
}
