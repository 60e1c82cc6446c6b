//! The offline lifter: features from names, docstrings, signatures and
//! callees. No model, no network, fully deterministic.

use super::{normalize_features, FileLiftInput, LiftError, LiftInput, Lifted, Lifter};
use crate::parse::Kind;
use crate::text::words::{base_verb, is_stop, is_verb, prose_words, split_identifier};

pub struct OfflineLifter;

pub const OFFLINE_ID: &str = crate::graph::OFFLINE_LIFTER;

const MAX_FEATURES: usize = 5;

impl Lifter for OfflineLifter {
    fn id(&self) -> &str {
        OFFLINE_ID
    }

    fn reads_code(&self) -> bool {
        false
    }

    fn lift(&self, items: &[LiftInput]) -> Result<Vec<Lifted>, LiftError> {
        Ok(items.iter().map(lift).collect())
    }

    fn summarize_files(&self, files: &[FileLiftInput]) -> Result<Vec<Lifted>, LiftError> {
        Ok(files.iter().map(summarize).collect())
    }
}

/// [`OFFLINE_ID`], one text for every entity of a graph.
fn offline_id() -> crate::graph::Id {
    static ID: std::sync::LazyLock<crate::graph::Id> =
        std::sync::LazyLock::new(|| crate::graph::Id::from(OFFLINE_ID));
    ID.clone()
}

/// One entity's offline features.
pub fn lift(item: &LiftInput) -> Lifted {
    Lifted {
        features: lift_one(item),
        by: offline_id(),
    }
}

/// One file's offline summary.
pub fn summarize(file: &FileLiftInput) -> Lifted {
    Lifted {
        features: summary(file),
        by: offline_id(),
    }
}

fn summary(file: &FileLiftInput) -> Vec<String> {
    let mut raw = Vec::new();
    if let Some(p) = doc_phrase(file.doc) {
        raw.push(p);
    }
    let stem = file
        .path
        .rsplit('/')
        .next()
        .unwrap_or(file.path)
        .split('.')
        .next()
        .unwrap_or("");
    let stem = if matches!(stem, "__init__" | "mod" | "lib" | "main") {
        file.path.rsplit('/').nth(1).unwrap_or(stem)
    } else {
        stem
    };
    let words: Vec<String> = split_identifier(stem)
        .into_iter()
        .filter(|w| !is_stop(w) || is_verb(w))
        .collect();
    if !words.is_empty() {
        raw.push(format!("provide {}", words.join(" ")));
    }
    for feats in file.top_features.iter().take(3) {
        if let Some(f) = feats.first() {
            raw.push(f.clone());
        }
    }
    normalize_features(raw, MAX_FEATURES)
}

fn lift_one(item: &LiftInput) -> Vec<String> {
    let mut raw = Vec::new();
    let owner_words = item
        .owner
        .map(|o| split_identifier(o.rsplit(['.', ':']).next().unwrap_or(o)).join(" "))
        .unwrap_or_default();
    match item.kind {
        Kind::Class => raw.push(class_phrase(item.name, item.flavor)),
        _ => raw.extend(function_phrase(item.name, &owner_words)),
    }
    if let Some(p) = doc_phrase(item.doc) {
        raw.push(p);
    }
    if let Some(r) = return_phrase(item.signature) {
        raw.push(r);
    }
    let mut callee_phrases = 0;
    for callee in &item.callees {
        if callee_phrases == 2 {
            break;
        }
        let words = split_identifier(callee);
        if words.len() >= 2 && is_verb(&words[0]) && words[0] != "get" && words[0] != "set" {
            raw.push(words.join(" "));
            callee_phrases += 1;
        }
    }
    normalize_features(raw, MAX_FEATURES)
}

fn class_phrase(name: &str, flavor: &str) -> String {
    let words = split_identifier(name);
    let last = words.last().map(String::as_str).unwrap_or("");
    match (flavor, last) {
        (_, "error" | "exception" | "warning") => format!("signal {}", words.join(" ")),
        ("trait", _) => format!("define {} interface", words.join(" ")),
        ("enum", _) => format!("enumerate {} variants", words.join(" ")),
        _ if words.first().is_some_and(|w| w == "test") => {
            format!("test {}", words[1..].join(" "))
        }
        _ => format!("represent {}", words.join(" ")),
    }
}

fn function_phrase(name: &str, owner: &str) -> Vec<String> {
    let of_owner = |verb: &str| {
        if owner.is_empty() {
            verb.to_string()
        } else {
            format!("{verb} {owner}")
        }
    };
    let dunder = match name {
        "__init__" | "new" => Some(of_owner("initialize")),
        "__new__" => Some(of_owner("construct")),
        "__repr__" | "__str__" | "fmt" => Some(format!("{} as text", of_owner("format"))),
        "__eq__" | "__ne__" | "eq" => Some(format!("{} equality", of_owner("compare"))),
        "__lt__" | "__le__" | "__gt__" | "__ge__" | "cmp" | "partial_cmp" => {
            Some(format!("{} ordering", of_owner("compare")))
        }
        "__hash__" | "hash" => Some(of_owner("hash")),
        "__iter__" | "into_iter" => Some(of_owner("iterate")),
        "__next__" | "next" => Some(format!("advance {owner} iterator")),
        "__len__" | "len" => Some(format!("count {owner} items")),
        "__contains__" => Some(format!("check {owner} membership")),
        "__getitem__" | "index" => Some(format!("get {owner} item")),
        "__setitem__" => Some(format!("set {owner} item")),
        "__delitem__" => Some(format!("delete {owner} item")),
        "__enter__" | "__aenter__" => Some(format!("enter {owner} context")),
        "__exit__" | "__aexit__" | "drop" => Some(format!("release {owner} resources")),
        "__call__" => Some(of_owner("invoke")),
        "__getattr__" | "__getattribute__" => Some(format!("get {owner} attribute")),
        "__setattr__" => Some(format!("set {owner} attribute")),
        "__bool__" => Some(format!("check {owner} truth")),
        "default" => Some(format!("create default {owner}")),
        "clone" => Some(of_owner("clone")),
        _ => None,
    };
    if let Some(d) = dunder {
        return vec![d];
    }
    let words = split_identifier(name);
    let Some(first) = words.first() else {
        return Vec::new();
    };
    let rest = words[1..].join(" ");
    let object = if rest.is_empty() {
        owner.to_string()
    } else {
        rest.clone()
    };
    let phrase = match first.as_str() {
        "is" | "has" | "can" | "should" | "needs" => format!("check {object}"),
        "to" | "into" => format!("convert to {object}"),
        "from" => format!("create from {object}"),
        "as" => format!("view as {object}"),
        "on" => format!("handle {object} event"),
        "with" => format!("configure with {object}"),
        "test" => format!("test {rest}"),
        w if is_verb(w) => {
            if rest.is_empty() {
                format!("{w} {owner}")
            } else {
                words.join(" ")
            }
        }
        w => match base_verb(w) {
            Some(v) if !rest.is_empty() => format!("{v} {rest}"),
            _ => format!("get {}", words.join(" ")),
        },
    };
    vec![phrase]
}

/// The first sentence of a docstring as a verb-led phrase, when it is one.
fn doc_phrase(doc: &str) -> Option<String> {
    let sentence = doc
        .split_terminator(['.', '\n', ':', ';'])
        .next()
        .unwrap_or("")
        .trim();
    let words: Vec<String> = prose_words(sentence);
    let first = words.first()?;
    let verb = base_verb(first)?;
    let mut out = vec![verb];
    out.extend(
        words[1..]
            .iter()
            .filter(|w| !matches!(w.as_str(), "a" | "an" | "the" | "this" | "that" | "given"))
            .take(6)
            .cloned(),
    );
    (out.len() >= 2).then(|| out.join(" "))
}

fn return_phrase(signature: &str) -> Option<String> {
    let ret = signature.rsplit_once("->")?.1;
    // Judge whole type tokens (`f64`, `Option`) before splitting them into words.
    let words: Vec<String> = ret
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|t| !t.is_empty() && !TRIVIAL_TYPES.contains(&t.to_lowercase().as_str()))
        .flat_map(split_identifier)
        .filter(|w| w.len() > 1 && !is_stop(w))
        .take(3)
        .collect();
    (!words.is_empty()).then(|| format!("return {}", words.join(" ")))
}

/// Return types that say nothing about what a function is for.
#[rustfmt::skip]
const TRIVIAL_TYPES: &[&str] = &[
    "bool", "none", "str", "int", "float", "bytes", "self", "option", "optional", "result",
    "string", "vec", "list", "dict", "tuple", "set", "any", "box", "rc", "arc", "impl", "dyn",
    "where", "mut", "static", "usize", "isize", "u8", "u16", "u32", "u64", "u128", "i8", "i16",
    "i32", "i64", "i128", "f32", "f64", "char", "error", "io", "std", "fmt", "anyhow", "t", "e",
    "a", "r", "typing", "iterator", "iter", "generator",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::Lang;

    fn input<'a>(kind: Kind, name: &'a str, doc: &'a str, sig: &'a str) -> LiftInput<'a> {
        LiftInput {
            path: "m.py",
            qualname: name,
            hash: "",
            code: "",
            lang: Lang::Python,
            kind,
            name,
            owner: None,
            flavor: "def",
            signature: sig,
            doc,
            callees: vec![],
        }
    }

    #[test]
    fn names_become_verb_object_phrases() {
        let f = lift_one(&input(Kind::Function, "parsedate_to_datetime", "", ""));
        assert_eq!(f[0], "parse date to datetime");
        let f = lift_one(&input(Kind::Function, "is_valid_cidr", "", ""));
        assert_eq!(f[0], "check valid cidr");
    }

    /// Init keeps no file text for a lifter that says it reads none.
    #[test]
    fn offline_features_never_depend_on_the_code_text() {
        assert!(!OfflineLifter.reads_code());
        let bare = input(
            Kind::Function,
            "load_config",
            "Read the settings.",
            "def load_config(path)",
        );
        let with_code = LiftInput {
            code: "def load_config(path):\n    return parse_toml(open(path).read())\n",
            ..bare.clone()
        };
        assert_eq!(lift(&bare), lift(&with_code));
    }

    #[test]
    fn docstrings_contribute_their_first_sentence() {
        let f = lift_one(&input(
            Kind::Function,
            "prepare_body",
            "Prepares the given HTTP body data. More text.",
            "",
        ));
        assert!(f.contains(&"prepare http body data".to_string()), "{f:?}");
    }

    #[test]
    fn lifting_is_deterministic_whatever_the_batch_and_its_order() {
        let mut rich = input(
            Kind::Method,
            "prepare_content_length",
            "Prepare the Content-Length header. Then more.",
            "def prepare_content_length(self, body) -> None",
        );
        rich.owner = Some("PreparedRequest");
        rich.callees = vec![
            "compute_total_length",
            "validate_body",
            "headers.setdefault",
        ];
        let class = input(
            Kind::Class,
            "PreparedRequest",
            "The fully mutable request.",
            "",
        );
        let alone = lift(&rich).features;
        // Pinned, so an order that depends on hashing or threads shows up.
        assert_eq!(
            alone,
            [
                "prepare content length",
                "prepare content length header",
                "compute total length",
                "validate body"
            ],
            "{alone:?}"
        );
        let forward = OfflineLifter.lift(&[class.clone(), rich.clone()]).unwrap();
        let backward = OfflineLifter.lift(&[rich, class]).unwrap();
        assert_eq!(forward[1].features, alone);
        assert_eq!(backward[0].features, alone);
        assert_eq!(forward[0].features, backward[1].features);
        assert_eq!(forward[0].features[0], "represent prepared request");
    }
}
