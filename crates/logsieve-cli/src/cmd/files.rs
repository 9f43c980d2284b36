//! `--files` and `--type-list`: list what a search would read, or the file
//! types, instead of searching (ripgrep's modes).

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use logsieve::corpus::{walk, Walker};

use crate::exit::{err, EXIT_ERROR, EXIT_MATCH, EXIT_NO_MATCH};
use crate::flags::walk::WalkArgs;

/// `--type-list` or `--files`: prints, returns the exit code (as rg: 0
/// when something was listed, 1 when nothing, 2 after an error).
pub fn list<P: AsRef<Path>>(paths: &[P], a: &WalkArgs) -> i32 {
    let out = io::stdout();
    let mut out = io::BufWriter::new(out.lock());
    let mut had_error = false;
    let mut listed = false;
    let mut res = Ok(());
    if a.type_list {
        for (name, globs) in walk::type_list() {
            res = res.and_then(|_| writeln!(out, "{name}: {}", globs.join(", ")));
        }
        listed = true;
    } else {
        let walker = match Walker::new(&a.options()) {
            Ok(w) => w,
            Err(e) => {
                err(e);
                return EXIT_ERROR;
            }
        };
        // No path: the current directory, printed without `./` (as rg).
        let implicit = paths.is_empty();
        let paths: Vec<PathBuf> = if implicit {
            vec![PathBuf::from("./")]
        } else {
            paths.iter().map(|p| p.as_ref().to_path_buf()).collect()
        };
        for found in walker.walk(&paths) {
            match found {
                Ok(f) => {
                    let p = match f.path.strip_prefix("./") {
                        Ok(rest) if implicit => rest,
                        _ => &f.path,
                    };
                    listed = true;
                    res = res.and_then(|_| {
                        out.write_all(p.as_os_str().as_encoded_bytes())?;
                        out.write_all(b"\n")
                    });
                }
                Err(e) => {
                    err(e);
                    had_error = true;
                }
            }
        }
    }
    if let Err(e) = res.and_then(|_| out.flush()) {
        if e.kind() != io::ErrorKind::BrokenPipe {
            err(e);
            had_error = true;
        }
    }
    if had_error {
        EXIT_ERROR
    } else if listed {
        EXIT_MATCH
    } else {
        EXIT_NO_MATCH
    }
}
