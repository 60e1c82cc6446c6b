//! Query-time access to the index.

use super::*;

/// Query-time access to the index: posting lists by term, documents by
/// file, loaded once per query.
pub struct Reader<'s> {
    pub store: &'s Store,
    pub meta: IndexMeta,
    files: std::cell::RefCell<HashMap<u32, Rc<FileDocs>>>,
    paths: std::cell::OnceCell<Paths>,
    /// Where files' text is read from, when the caller gave it.
    objects: Option<gix::Repository>,
    texts: std::cell::RefCell<HashMap<u32, Option<Rc<str>>>>,
    segment: std::cell::OnceCell<Option<Segment>>,
    /// Files whose postings in the segment are void.
    void: std::cell::OnceCell<HashSet<u32>>,
}

impl<'s> Reader<'s> {
    /// Open the index as it stands; see [`ready`] to bring it in step first.
    pub fn open(store: &'s Store) -> Result<Reader<'s>, SearchError> {
        let meta = match store.search_get(META)? {
            Some(b) => decode(store, "meta", &b)?,
            None => IndexMeta::default(),
        };
        Ok(Reader {
            store,
            meta,
            files: Default::default(),
            paths: Default::default(),
            objects: None,
            texts: Default::default(),
            segment: Default::default(),
            void: Default::default(),
        })
    }

    /// Let queries read files' text (for evidence inside functions) from
    /// `repo`'s objects.
    pub fn with_sources(mut self, repo: &Repo) -> Self {
        self.objects = Some(repo.local());
        self
    }

    pub fn has_sources(&self) -> bool {
        self.objects.is_some()
    }

    /// The text of file `num` as it was indexed: the blob its documents'
    /// lines count in. `None` without sources, or when the blob cannot be
    /// read (a partial clone): evidence inside it is simply not seen.
    pub fn source(&self, num: u32) -> Result<Option<Rc<str>>, SearchError> {
        if let Some(t) = self.texts.borrow().get(&num) {
            return Ok(t.clone());
        }
        let text = self.read_source(num)?;
        self.texts.borrow_mut().insert(num, text.clone());
        Ok(text)
    }

    /// [`Reader::source`], read afresh and kept by nobody: for scans.
    pub fn read_source(&self, num: u32) -> Result<Option<Rc<str>>, SearchError> {
        let Some(objects) = &self.objects else {
            return Ok(None);
        };
        let path = self.file(num)?.path.clone();
        let text = match self.store.search_get(&key(SLOTS, &path))? {
            Some(b) => {
                let slot: Slot = decode(self.store, "slot", &b)?;
                gix::ObjectId::from_hex(slot.blob.as_bytes())
                    .ok()
                    .and_then(|id| Repo::read_blob(objects, id).ok())
                    .map(|b| Rc::from(String::from_utf8_lossy(&b).as_ref()))
            }
            None => None,
        };
        Ok(text)
    }

    pub fn postings(&self, field: Field, term: &str) -> Result<Vec<Posting>, SearchError> {
        let prefix = match field {
            Field::All => POST_ALL,
            Field::Features => POST_FEATURES,
        };
        self.shards(prefix, term)
    }

    /// Indexed words of `field` (or of module text) that share `term`'s
    /// stem, other than `term`: how an issue's word the code never spells
    /// (`coloring`) finds the code's own (`color`, `colors`).
    pub fn variants(&self, field: Option<Field>, term: &str) -> Result<Vec<String>, SearchError> {
        let stem = crate::text::words::stem(term);
        if stem.len() < 4 || term.starts_with("--") {
            return Ok(Vec::new());
        }
        let prefix = match field {
            Some(Field::All) => POST_ALL,
            Some(Field::Features) => POST_FEATURES,
            None => POST_MODULE,
        };
        let mut out: Vec<String> = Vec::new();
        for word in self.words(prefix, &stem, usize::MAX)? {
            if word != term && crate::text::words::stem(&word) == stem {
                out.push(word);
            }
        }
        Ok(out)
    }

    /// Words with postings under `prefix` that start with `start`, in
    /// order, at most `max`: the segment's and sled's keys merged, a word
    /// whose every posting is void left out.
    fn words(&self, prefix: &str, start: &str, max: usize) -> Result<Vec<String>, SearchError> {
        let mut words: BTreeSet<String> = BTreeSet::new();
        let whole = key(prefix, start);
        // A word has one key per shard in sled and none in the segment
        // but its own.
        for k in self.store.search_keys(&whole)? {
            let rest = &k[prefix.len()..];
            let word = &rest[..rest.iter().position(|b| *b == 0).unwrap_or(rest.len())];
            if let Ok(word) = std::str::from_utf8(word) {
                words.insert(word.to_string());
            }
        }
        if let Some(seg) = self.segment()? {
            // The first `max` words of the union are found once `max` live
            // words of the segment are; a word of a changed file may have
            // no live posting left, so the walk goes on past it.
            let void = !self.void()?.is_empty();
            let (mut live, mut failed) = (0, None);
            seg.keys_with(&whole, |k| {
                let Ok(word) = std::str::from_utf8(&k[prefix.len()..]) else {
                    return true;
                };
                if words.contains(word) {
                    return true;
                }
                match void.then(|| self.shards(prefix, word)).transpose() {
                    Ok(Some(shards)) if shards.is_empty() => {}
                    Ok(_) => {
                        words.insert(word.to_string());
                        live += 1;
                    }
                    Err(e) => failed = Some(e),
                }
                failed.is_none() && live < max
            });
            if let Some(e) = failed {
                return Err(e);
            }
        }
        Ok(words.into_iter().take(max).collect())
    }

    /// The segment, opened on first use; `None` before any first build.
    fn segment(&self) -> Result<Option<&Segment>, SearchError> {
        if let Some(s) = self.segment.get() {
            return Ok(s.as_ref());
        }
        let seg = match (&self.meta.segment, self.store.open_segment()?) {
            (Some(seal), Some(file)) => {
                Some(Segment::open(file, seal).map_err(|e| self.damaged(e))?)
            }
            _ => None,
        };
        Ok(self.segment.get_or_init(|| seg).as_ref())
    }

    fn damaged(&self, e: crate::search::segment::SegmentError) -> StoreError {
        self.store.corrupt(&format!("segment ({e})"))
    }

    /// Files whose postings in the segment are void.
    fn void(&self) -> Result<&HashSet<u32>, SearchError> {
        if let Some(v) = self.void.get() {
            return Ok(v);
        }
        let mut void = HashSet::new();
        for k in self.store.search_keys(VOID.as_bytes())? {
            let num = k[VOID.len()..].try_into().map(u32::from_be_bytes);
            void.insert(num.map_err(|_| self.store.corrupt("void"))?);
        }
        Ok(self.void.get_or_init(|| void))
    }

    /// Files whose module text holds `term`, each at position 0.
    pub fn module_postings(&self, term: &str) -> Result<Vec<Posting>, SearchError> {
        self.shards(POST_MODULE, term)
    }

    /// Documents whose bare name is `name` (lowercase).
    pub fn named(&self, name: &str) -> Result<Vec<DocKey>, SearchError> {
        let list = self.shards(NAMES, name)?;
        Ok(list.into_iter().map(|p| (p.0, p.1)).collect())
    }

    /// Indexed bare names (lowercase) that start with `prefix`, at most
    /// `max`, in order.
    pub fn names_starting(&self, prefix: &str, max: usize) -> Result<Vec<String>, SearchError> {
        if !keyable(prefix) {
            return Ok(Vec::new());
        }
        self.words(NAMES, prefix, max)
    }

    /// `term`'s list under `prefix`, in file order: the segment's live
    /// postings and every shard of sled's.
    fn shards(&self, prefix: &str, term: &str) -> Result<Vec<Posting>, StoreError> {
        let mut out = Vec::new();
        if !keyable(term) {
            return Ok(out);
        }
        let got = match self.segment()? {
            Some(seg) => seg.get(&key(prefix, term)),
            None => Ok(None),
        };
        if let Some(b) = got.map_err(|e| self.damaged(e))? {
            out = decode::<Vec<Posting>>(self.store, "postings", &b)?;
            let void = self.void()?;
            if !void.is_empty() {
                out.retain(|p| !void.contains(&p.0));
            }
        }
        let from_segment = out.len();
        for (_, b) in self.store.search_scan(&term_prefix(prefix, term))? {
            out.extend(decode::<Vec<Posting>>(self.store, "postings", &b)?);
        }
        if from_segment > 0 && out.len() > from_segment {
            out.sort_by_key(|p| (p.0, p.1));
        }
        Ok(out)
    }

    pub fn file(&self, num: u32) -> Result<Rc<FileDocs>, SearchError> {
        if let Some(f) = self.files.borrow().get(&num) {
            return Ok(f.clone());
        }
        let f: FileDocs = match self.store.search_get(&num_key(DOCS, num))? {
            Some(b) => decode(self.store, "docs", &b)?,
            None => return Err(self.store.corrupt("missing documents")),
        };
        let f = Rc::new(f);
        self.files.borrow_mut().insert(num, f.clone());
        Ok(f)
    }

    /// The classes of file `num` with their members.
    pub fn owners(&self, num: u32) -> Result<Owners, SearchError> {
        match self.store.search_get(&num_key(OWNERS, num))? {
            Some(b) => Ok(decode(self.store, "owners", &b)?),
            None => Ok(Owners::new()),
        }
    }

    /// Every indexed file's path by number: the segment's table, with the
    /// files that came or left since.
    pub fn paths(&self) -> Result<&Paths, SearchError> {
        if let Some(p) = self.paths.get() {
            return Ok(p);
        }
        let mut table: Vec<String> = match self.segment()? {
            Some(seg) => match seg.get(PATHS.as_bytes()).map_err(|e| self.damaged(e))? {
                Some(b) => decode(self.store, "paths", &b)?,
                None => return Err(self.store.corrupt("missing paths")),
            },
            None => Vec::new(),
        };
        for (k, v) in self.store.search_scan(PATHS_SINCE.as_bytes())? {
            let num = k[PATHS_SINCE.len()..].try_into().map(u32::from_be_bytes);
            let num = num.map_err(|_| self.store.corrupt("paths"))? as usize;
            // Numbers come from `next`: one past it is a damaged record,
            // never a reason to allocate.
            if num >= self.meta.next as usize {
                return Err(self.store.corrupt("paths"));
            }
            if table.len() <= num {
                table.resize(num + 1, String::new());
            }
            table[num] = String::from_utf8(v.to_vec()).map_err(|_| self.store.corrupt("paths"))?;
        }
        if table.len() > self.meta.next as usize {
            return Err(self.store.corrupt("paths"));
        }
        Ok(self.paths.get_or_init(|| Paths(table)))
    }

    /// The number of the indexed file at `path`.
    pub fn num_of(&self, path: &str) -> Result<Option<u32>, SearchError> {
        Ok(match self.store.search_get(&key(SLOTS, path))? {
            Some(b) => Some(decode::<Slot>(self.store, "slot", &b)?.num),
            None => None,
        })
    }

    /// The document with this id, if indexed.
    pub fn doc_of(&self, id: &str) -> Result<Option<DocKey>, SearchError> {
        let (path, qual) = crate::graph::split_id(id);
        if qual.is_empty() {
            return Ok(None);
        }
        let Some(num) = self.num_of(path)? else {
            return Ok(None);
        };
        let f = self.file(num)?;
        Ok(f.docs
            .iter()
            .position(|d| d.qualname == qual)
            .map(|i| (num, i as u16)))
    }
}
