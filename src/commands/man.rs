//! `hub man DIR`: man pages made from the command-line definitions, so they
//! say what `--help` says: `hub.1`, and one page per subcommand named after
//! its path (`hub-deploy.1`, `hub-state-pull.1`, …).

use crate::cli::{Cli, ManArgs};
use clap::CommandFactory;
use hub_workflow::Error;
use std::path::Path;

/// Writes every page into `args.folder`, creating it when missing, and
/// says how many on stderr.
pub fn write_pages(args: ManArgs) -> Result<(), Error> {
    let folder = args.folder.as_path();
    if folder.exists() && !folder.is_dir() {
        return Err(Error::Write {
            path: folder.to_path_buf(),
            source: std::io::Error::other("it is a file; man pages go into a folder"),
        });
    }
    std::fs::create_dir_all(folder).map_err(|source| Error::Write {
        path: folder.to_path_buf(),
        source,
    })?;
    let mut command = Cli::command();
    command.build();
    let mut written = 0;
    write_tree(&command, "hub", folder, &mut written)?;
    hub_manifest::console::err_line(&format!(
        "hub: wrote {written} man pages to {}",
        folder.display()
    ));
    Ok(())
}

/// The page of `command` (named `name`), then those of its subcommands.
fn write_tree(
    command: &clap::Command,
    name: &str,
    folder: &Path,
    written: &mut usize,
) -> Result<(), Error> {
    let page = command.clone().name(name.to_string());
    let mut text = Vec::new();
    let path = folder.join(format!("{name}.1"));
    let write_error = |source| Error::Write {
        path: path.clone(),
        source,
    };
    clap_mangen::Man::new(page)
        .render(&mut text)
        .map_err(write_error)?;
    // Atomic, and a link planted at the page's name is replaced, not
    // followed (the folder may be a shared one, written as root).
    hub_manifest::write_output(&path, &text, false).map_err(write_error)?;
    *written += 1;
    // clap's own `help` subcommand only repeats the pages written here.
    let documented = |sub: &&clap::Command| !sub.is_hide_set() && sub.get_name() != "help";
    for sub in command.get_subcommands().filter(documented) {
        write_tree(sub, &format!("{name}-{}", sub.get_name()), folder, written)?;
    }
    Ok(())
}
