//! Which tracked files are never indexed: those the config's globs name
//! (vendored and generated code by its usual places), and those the
//! repository's own `.gitattributes` mark `linguist-vendored` or
//! `linguist-generated`, the marks GitHub reads to leave code out of a
//! repository's languages and diffs. A fix belongs in the project's own
//! code, or in the grammar a parser was generated from, not in the copy.

use crate::git::{GitError, Repo, TreeFile};
use gix::attrs::search::{MetadataCollection, Outcome};
use gix::attrs::{Search, StateRef};
use gix::bstr::ByteSlice;
use globset::GlobSet;
use std::path::{Path, PathBuf};

/// The attributes that leave a file out.
const MARKS: [&str; 2] = ["linguist-vendored", "linguist-generated"];
/// A larger attributes file is not read: no real one comes near it.
const MAX_ATTRIBUTES_BYTES: usize = 1 << 20;
/// The lines that can mark files, over all attributes files together;
/// files past it (the deepest last) are not read. A tree can name one
/// large attributes blob from a thousand directories for the price of one.
const MAX_MARKING_BYTES: usize = 4 << 20;

/// The rule a tree's files are filtered by.
pub struct Exclude {
    globs: GlobSet,
    marked: Option<Marked>,
}

struct Marked {
    search: Search,
    names: MetadataCollection,
}

impl Exclude {
    /// Only the config's globs.
    pub fn globs(globs: GlobSet) -> Exclude {
        Exclude {
            globs,
            marked: None,
        }
    }

    /// The config's globs and what the tree's attributes files (see
    /// [`attributes_files`]) mark.
    pub fn new(
        globs: GlobSet,
        repo: &gix::Repository,
        attributes: &[TreeFile],
    ) -> Result<Exclude, GitError> {
        // Each distinct blob is read once, however many directories hold it.
        let mut read: std::collections::HashMap<gix::ObjectId, std::rc::Rc<[u8]>> =
            std::collections::HashMap::new();
        let mut texts = Vec::with_capacity(attributes.len());
        for f in attributes {
            let text = match read.get(&f.blob) {
                Some(t) => t.clone(),
                None => {
                    // One that cannot be read (a missing object) marks
                    // nothing: a missing object costs its own file only.
                    let t: std::rc::Rc<[u8]> =
                        Repo::read_blob(repo, f.blob).unwrap_or_default().into();
                    read.insert(f.blob, t.clone());
                    t
                }
            };
            texts.push((f.path.as_str(), text));
        }
        Ok(Self::with_attributes(globs, &texts))
    }

    /// The config's globs and what the attributes files, by path, mark.
    /// As in git, a deeper file's lines override a shallower one's, and
    /// later lines earlier ones. Only the lines that can mark a file are
    /// kept, up to [`MAX_MARKING_BYTES`] over all files.
    pub fn with_attributes<T: AsRef<[u8]>>(globs: GlobSet, files: &[(&str, T)]) -> Exclude {
        let mut files: Vec<(&str, &[u8])> = files
            .iter()
            .map(|(path, text)| (*path, text.as_ref()))
            .filter(|(_, text)| text.len() <= MAX_ATTRIBUTES_BYTES)
            .collect();
        files.sort_by_key(|(path, _)| (path.matches('/').count(), *path));
        let macros = files
            .iter()
            .find(|(path, _)| *path == ".gitattributes")
            .map(|(_, text)| marking_macros(text))
            .unwrap_or_default();
        // By where the bytes are: `new` hands the same blob's one copy to
        // every directory that holds it, so each is filtered once.
        let mut kept: std::collections::HashMap<(*const u8, usize), std::rc::Rc<Vec<u8>>> =
            std::collections::HashMap::new();
        let mut budget = MAX_MARKING_BYTES;
        let mut search = Search::default();
        let mut names = MetadataCollection::default();
        for (path, text) in files {
            let text = kept
                .entry((text.as_ptr(), text.len()))
                .or_insert_with(|| std::rc::Rc::new(marking_lines(text, &macros)))
                .clone();
            if text.is_empty() && path != ".gitattributes" {
                continue;
            }
            let Some(left) = budget.checked_sub(text.len()) else {
                break;
            };
            budget = left;
            let text = text.as_slice();
            // Git reads macro definitions only from the top-level file.
            let macros = path == ".gitattributes";
            // Only an unrepresentable directory fails, and git could not
            // apply such a file either.
            let _ = search.add_patterns_buffer(
                text,
                PathBuf::from(path),
                Some(Path::new("")),
                &mut names,
                macros,
            );
        }
        let marked = (search.num_pattern_lists() > 0).then_some(Marked { search, names });
        Exclude { globs, marked }
    }

    pub fn is_match(&self, path: &str) -> bool {
        self.globs.is_match(path) || self.marked.as_ref().is_some_and(|m| m.marks(path))
    }
}

impl Marked {
    fn marks(&self, path: &str) -> bool {
        let mut out = Outcome::default();
        out.initialize_with_selection(&self.names, MARKS);
        self.search.pattern_matching_relative_path(
            path.as_bytes().as_bstr(),
            gix::glob::pattern::Case::Sensitive,
            Some(false),
            &mut out,
        );
        let marked = out.iter_selected().any(|m| match m.assignment.state {
            StateRef::Set => true,
            StateRef::Value(v) => v.as_bstr().eq_ignore_ascii_case(b"true"),
            StateRef::Unset | StateRef::Unspecified => false,
        });
        marked
    }
}

/// The names of the top-level file's macros that set a mark.
fn marking_macros(text: &[u8]) -> Vec<Vec<u8>> {
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix(b"[attr]"))
        .filter(|l| MARKS.iter().any(|m| l.contains_str(m)))
        .filter_map(|l| l.split(|b| b.is_ascii_whitespace()).next())
        .map(<[u8]>::to_vec)
        .collect()
}

/// The lines of an attributes file that can mark a file: those naming a
/// mark or a macro that sets one. Every other attribute is left unread.
fn marking_lines(text: &[u8], macros: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in text.lines() {
        let marks = MARKS.iter().any(|m| line.contains_str(m))
            || line
                .split(|b| b.is_ascii_whitespace())
                .skip(1)
                .any(|w| macros.iter().any(|m| w == m.as_slice()));
        if marks {
            out.extend_from_slice(line);
            out.push(b'\n');
        }
    }
    out
}

/// Whether `path` is a `.gitattributes` file.
pub fn is_attributes(path: &str) -> bool {
    path.rsplit('/').next() == Some(".gitattributes")
}

/// The tree's `.gitattributes` files, bar those in directories `globs`
/// leave out (rpg's own `.rpg/` has one): they speak only for files that
/// are out already.
pub fn attributes_files(files: &[TreeFile], globs: &GlobSet) -> Vec<TreeFile> {
    files
        .iter()
        .filter(|f| is_attributes(&f.path) && !globs.is_match(&f.path))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exclude(files: &[(&str, &str)]) -> Exclude {
        let files: Vec<(&str, Vec<u8>)> = files
            .iter()
            .map(|(p, t)| (*p, t.as_bytes().to_vec()))
            .collect();
        Exclude::with_attributes(GlobSet::empty(), &files)
    }

    #[test]
    fn vendored_and_generated_marks_leave_files_out() {
        let ex = exclude(&[(
            ".gitattributes",
            "* text=auto\nsrc/decNumber/** linguist-vendored\nsrc/parser.[ch] linguist-generated=true\n",
        )]);
        assert!(ex.is_match("src/decNumber/decNumber.c"));
        assert!(ex.is_match("src/parser.c"));
        assert!(!ex.is_match("src/parser.y"));
        assert!(!ex.is_match("src/jv.c"));
    }

    #[test]
    fn a_deeper_file_and_a_later_line_override() {
        let ex = exclude(&[
            ("lib/.gitattributes", "gen.c -linguist-generated\n"),
            (
                ".gitattributes",
                "*.c linguist-generated\nkeep.c linguist-generated=false\n",
            ),
        ]);
        assert!(ex.is_match("src/a.c"));
        assert!(!ex.is_match("src/keep.c"));
        assert!(!ex.is_match("lib/gen.c"));
        // A nested file speaks only for its own directory.
        assert!(ex.is_match("gen.c"));
    }

    #[test]
    fn macros_are_read_only_from_the_top_level_file() {
        let ex = exclude(&[
            (
                ".gitattributes",
                "[attr]thirdparty linguist-vendored\nextern/** thirdparty\n",
            ),
            (
                "src/.gitattributes",
                "[attr]mine linguist-vendored\nx.c mine\n",
            ),
        ]);
        assert!(ex.is_match("extern/zlib/inflate.c"));
        assert!(!ex.is_match("src/x.c"));
    }

    #[test]
    fn garbage_attributes_mark_nothing() {
        let garbage = "\u{0}\u{1}[attr]\n!!!\n\"unterminated\n** \n/ linguist-vendored=\n";
        let ex = exclude(&[(".gitattributes", garbage)]);
        assert!(!ex.is_match("src/jv.c"));
    }
}
