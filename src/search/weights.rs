//! The ranker's weights, and the file they ship in: `weights.json`
//! beside this module, written by `rpg eval --fit` with the command line
//! that fitted it. A weights file given to `rpg eval --weights` is input,
//! so it is checked as such.

use serde::{Deserialize, Serialize};

/// How much each component weighs. The defaults are fitted on the dev
/// sets by the command `weights.json` names; see `rpg eval --fit`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Weights {
    /// An entity whose bare name the issue mentions.
    pub name: f32,
    /// An entity whose qualified name (`Class.method`) the issue mentions.
    pub dotted_name: f32,
    /// Every entity of a file a stack frame points into.
    pub frame_file: f32,
    /// The function a stack frame names.
    pub frame_function: f32,
    /// Every entity of a file the issue names.
    pub path_mention: f32,
    /// Share of a class's score its methods inherit.
    pub class_context: f32,
    /// Share of a strong hit's score its callers and callees gain.
    pub neighbour: f32,
    /// Factor on test code, per entity and per file.
    pub test_entity: f32,
    pub test_file: f32,
    /// File score: α·best + (1−α)·mean of the top 3 (RepoNav).
    pub alpha: f32,
    /// Per word a file's path shares with the issue.
    pub path_word: f32,
    /// Share of its directory's score (mean of the directory's best three
    /// files) a file gains.
    pub dir: f32,
    /// An entity among the embedding's nearest, scaled by its cosine
    /// relative to the nearest one's.
    pub dense: f32,
    /// A file's module text, by its BM25 relative to the best file's.
    pub module: f32,
    /// Functions are ranked by score × (1 + length / average length)^size:
    /// a fix more often lands in a long function than a short one.
    pub size: f32,
    /// [`Weights::size`] for Python's functions. Python alone lost by the
    /// prior: on its dev repositories each left out, and on 202 unseen
    /// Python issues (issue 45: function Hit@5 0.487 without it, 0.430
    /// with), while Rust, C and C++ gained on both.
    pub size_python: f32,
    /// A function that changed lately: score × (1 + recent × how much, in
    /// [0, 1); see [`super::recent`]).
    pub recent: f32,
    /// Factor on a file whose functions are all declarations.
    pub hollow_file: f32,
    /// A file's BM25 as one document (its entities' words and its module
    /// text together), relative to the best file's: a short message's
    /// words are often spread over a file's functions.
    pub whole_file: f32,
}

/// Every weight by name, with the most it may be. Factors and shares are
/// at most 1; the rest at most 100, which keeps every score finite. None
/// may be negative.
pub const LIMITS: [(&str, f32); 19] = [
    ("name", 100.0),
    ("dotted_name", 100.0),
    ("frame_file", 100.0),
    ("frame_function", 100.0),
    ("path_mention", 100.0),
    ("class_context", 1.0),
    ("neighbour", 1.0),
    ("test_entity", 1.0),
    ("test_file", 1.0),
    ("alpha", 1.0),
    ("path_word", 100.0),
    ("dir", 1.0),
    ("dense", 100.0),
    ("module", 100.0),
    ("size", 2.0),
    ("size_python", 2.0),
    ("recent", 10.0),
    ("hollow_file", 1.0),
    ("whole_file", 100.0),
];

impl Weights {
    /// The weight `LIMITS[i]` names.
    pub fn slot(&mut self, i: usize) -> &mut f32 {
        match i {
            0 => &mut self.name,
            1 => &mut self.dotted_name,
            2 => &mut self.frame_file,
            3 => &mut self.frame_function,
            4 => &mut self.path_mention,
            5 => &mut self.class_context,
            6 => &mut self.neighbour,
            7 => &mut self.test_entity,
            8 => &mut self.test_file,
            9 => &mut self.alpha,
            10 => &mut self.path_word,
            11 => &mut self.dir,
            12 => &mut self.dense,
            13 => &mut self.module,
            14 => &mut self.size,
            15 => &mut self.size_python,
            16 => &mut self.recent,
            17 => &mut self.hollow_file,
            _ => &mut self.whole_file,
        }
    }

    fn check(mut self) -> Result<Weights, WeightsError> {
        for (i, &(name, max)) in LIMITS.iter().enumerate() {
            let v = *self.slot(i);
            if !(0.0..=max).contains(&v) {
                return Err(WeightsError::OutOfRange {
                    name,
                    value: v,
                    max,
                });
            }
        }
        Ok(self)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum WeightsError {
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error("weight {name} is {value}; it must be between 0 and {max}")]
    OutOfRange {
        name: &'static str,
        value: f32,
        max: f32,
    },
}

/// The weights file: the weights and the command that fitted them.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WeightsFile {
    pub made_by: String,
    pub weights: Weights,
}

impl WeightsFile {
    pub fn parse(text: &str) -> Result<WeightsFile, WeightsError> {
        let file: WeightsFile = serde_json::from_str(text)?;
        Ok(WeightsFile {
            weights: file.weights.check()?,
            ..file
        })
    }

    /// The weights rpg ships with.
    pub fn shipped() -> Result<WeightsFile, WeightsError> {
        Self::parse(include_str!("weights.json"))
    }
}

static SHIPPED: std::sync::LazyLock<Weights> = std::sync::LazyLock::new(|| {
    // Compiled in, and parsed by a test: not input.
    WeightsFile::shipped()
        .expect("src/search/weights.json parses")
        .weights
});

impl Default for Weights {
    fn default() -> Self {
        *SHIPPED
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_weights_are_the_files_every_value_and_say_who_made_them() {
        let file = WeightsFile::shipped().unwrap();
        assert!(!file.made_by.is_empty());
        // Read apart from the parser: every key of the file, with its
        // value, and no weight the file does not set.
        let raw: serde_json::Value = serde_json::from_str(include_str!("weights.json")).unwrap();
        let written = raw["weights"].as_object().unwrap();
        let parsed = serde_json::to_value(Weights::default()).unwrap();
        let parsed = parsed.as_object().unwrap();
        assert_eq!(
            written.len(),
            parsed.len(),
            "a weight the file does not set"
        );
        for (key, value) in written {
            let got = parsed[key].as_f64().unwrap();
            assert!(
                (got - value.as_f64().unwrap()).abs() < 1e-6,
                "{key}: {got} vs {value}"
            );
        }
        // And they are what ranking uses when none are given.
        assert_eq!(Weights::default(), file.weights);
    }

    #[test]
    fn every_weight_has_its_own_slot() {
        let mut w = Weights::default();
        for i in 0..LIMITS.len() {
            *w.slot(i) = 1000.0 + i as f32;
        }
        let json = serde_json::to_value(w).unwrap();
        for (i, (name, _)) in LIMITS.iter().enumerate() {
            assert_eq!(json[name], 1000.0 + i as f64, "{name}");
        }
    }

    #[test]
    fn weights_out_of_range_or_unknown_are_refused() {
        let shipped = include_str!("weights.json");
        let negative = shipped.replace("\"name\": 0.", "\"name\": -0.");
        assert_ne!(negative, shipped);
        let e = WeightsFile::parse(&negative).unwrap_err().to_string();
        assert!(e.starts_with("weight name is -0."), "{e}");
        let share = shipped.replace("\"alpha\": 0.", "\"alpha\": 2.");
        assert!(WeightsFile::parse(&share).is_err());
        let unknown = shipped.replace("\"dense\"", "\"denser\"");
        let e = WeightsFile::parse(&unknown).unwrap_err().to_string();
        assert!(e.contains("unknown field `denser`"), "{e}");
    }
}
