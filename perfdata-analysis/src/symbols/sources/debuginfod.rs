//! A debuginfod client, as perf, gdb and elfutils' `debuginfod-find` use it: the servers
//! of `DEBUGINFOD_URLS` (space-separated) asked in turn for `/buildid/ID/debuginfo` or
//! `/buildid/ID/executable`, answers kept in the client's cache layout
//! (`$DEBUGINFOD_CACHE_PATH`, else `$XDG_CACHE_HOME/debuginfod_client`, else
//! `~/.cache/debuginfod_client`: `ID/debuginfo`, `ID/executable`), an object whose build
//! id is not the one asked for refused. `DEBUGINFOD_TIMEOUT` (seconds, default 90, as
//! elfutils') bounds each wait for the server; `DEBUGINFOD_MAXTIME` a whole transfer.
//! Every failure is one line on stderr and the object is left without symbols; a server
//! that cannot be reached is not asked again in the same run.

use super::same_build_id;
use crate::symbols::elf::ElfInfo;
use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What to fetch for a build id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Artifact {
    /// The separate debug file (`.debug`: symbols and DWARF).
    Debuginfo,
    /// The executable or shared object as it ran.
    Executable,
}

impl Artifact {
    fn name(self) -> &'static str {
        match self {
            Artifact::Debuginfo => "debuginfo",
            Artifact::Executable => "executable",
        }
    }
}

/// The servers, the cache and the HTTP agent.
pub struct Debuginfod {
    urls: Vec<String>,
    cache: PathBuf,
    agent: ureq::Agent,
    timeout: Duration,
    /// Servers that could not be reached (by index in `urls`).
    dead: RefCell<Vec<bool>>,
}

impl std::fmt::Debug for Debuginfod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Debuginfod")
            .field("urls", &self.urls)
            .field("cache", &self.cache)
            .finish_non_exhaustive()
    }
}

/// Seconds from an environment variable (a positive integer), if set.
fn env_seconds(name: &str) -> Option<Duration> {
    let v = std::env::var(name).ok()?;
    match v.trim().parse::<u64>() {
        Ok(s) if s > 0 => Some(Duration::from_secs(s)),
        _ => {
            eprintln!("perfdata: {name}={v:?} is not a positive number of seconds: ignored");
            None
        }
    }
}

impl Debuginfod {
    /// The client `DEBUGINFOD_URLS` asks for; `None` when it is unset or empty (opt-in,
    /// as perf).
    pub fn from_env() -> Option<Self> {
        let urls: Vec<String> = std::env::var("DEBUGINFOD_URLS")
            .ok()?
            .split_whitespace()
            .map(|u| u.trim_end_matches('/').to_string())
            .collect();
        if urls.is_empty() {
            return None;
        }
        let cache = std::env::var_os("DEBUGINFOD_CACHE_PATH")
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("XDG_CACHE_HOME")
                    .map(|x| PathBuf::from(x).join("debuginfod_client"))
            })
            .or_else(|| {
                std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/debuginfod_client"))
            })?;
        let timeout = env_seconds("DEBUGINFOD_TIMEOUT").unwrap_or(Duration::from_secs(90));
        Some(Self::new(
            urls,
            cache,
            timeout,
            env_seconds("DEBUGINFOD_MAXTIME"),
        ))
    }

    /// A client of these servers (base URLs), caching in `cache`; `timeout` bounds
    /// connecting (at most 10 s) and each wait for data, `max_time` a whole transfer.
    pub fn new(
        urls: Vec<String>,
        cache: PathBuf,
        timeout: Duration,
        max_time: Option<Duration>,
    ) -> Self {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_connect(Some(timeout.min(Duration::from_secs(10))))
            .timeout_per_read(Some(timeout))
            .timeout_global(max_time)
            .http_status_as_error(false)
            .user_agent(concat!("perfdata/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        let n = urls.len();
        Debuginfod {
            urls,
            cache,
            agent,
            timeout,
            dead: RefCell::new(vec![false; n]),
        }
    }

    /// The servers asked, for messages.
    pub fn urls(&self) -> &[String] {
        &self.urls
    }

    /// The cached or fetched file of `build_id`, its build id checked; `what` names the
    /// object in messages. `None` (with a message for each server that failed) when no
    /// server has it.
    pub fn fetch(&self, build_id: &[u8], artifact: Artifact, what: &str) -> Option<PathBuf> {
        let id = super::hex(build_id);
        let dir = self.cache.join(&id);
        let cached = dir.join(artifact.name());
        if cached.is_file() {
            if ElfInfo::read_build_id(&cached).is_some_and(|got| same_build_id(build_id, &got)) {
                return Some(cached);
            }
            // Not what it should be (a damaged cache): fetched again.
            let _ = std::fs::remove_file(&cached);
        }
        for (i, url) in self.urls.iter().enumerate() {
            if self.dead.borrow()[i] {
                continue;
            }
            let address = format!("{url}/buildid/{id}/{}", artifact.name());
            match self.download(&address, &dir, &cached, build_id) {
                Ok(()) => return Some(cached),
                Err(Failure::Missing(why)) => {
                    eprintln!(
                        "perfdata: debuginfod: no {} of {what}: {why}",
                        artifact.name()
                    );
                }
                Err(Failure::Unreachable(why)) => {
                    self.dead.borrow_mut()[i] = true;
                    eprintln!(
                        "perfdata: debuginfod: {url} failed for {what}: {why}; not asked again"
                    );
                }
            }
        }
        None
    }

    fn download(
        &self,
        address: &str,
        dir: &Path,
        cached: &Path,
        build_id: &[u8],
    ) -> Result<(), Failure> {
        let unreachable = |e: ureq::Error| {
            Failure::Unreachable(match e {
                ureq::Error::Timeout(_) => format!(
                    "no answer within {} s (DEBUGINFOD_TIMEOUT)",
                    self.timeout.as_secs()
                ),
                e => e.to_string(),
            })
        };
        let response = self.agent.get(address).call().map_err(unreachable)?;
        let status = response.status();
        if !status.is_success() {
            let why = format!("{address} answered {status}");
            // 404 is a server without the object; anything else a server in trouble.
            return Err(if status.as_u16() == 404 {
                Failure::Missing(why)
            } else {
                Failure::Unreachable(why)
            });
        }
        let io = |e: std::io::Error| Failure::Missing(format!("{}: {e}", dir.display()));
        std::fs::create_dir_all(dir).map_err(io)?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
        let mut body = response.into_body().into_reader();
        std::io::copy(&mut body, &mut tmp).map_err(|e| {
            Failure::Unreachable(
                if e.kind() == std::io::ErrorKind::TimedOut || e.to_string().contains("timeout") {
                    format!(
                        "{address}: transfer stalled for {} s (DEBUGINFOD_TIMEOUT)",
                        self.timeout.as_secs()
                    )
                } else {
                    format!("{address}: transfer failed: {e}")
                },
            )
        })?;
        tmp.flush().map_err(io)?;
        match ElfInfo::read_build_id(tmp.path()) {
            Some(got) if same_build_id(build_id, &got) => {}
            Some(got) => {
                return Err(Failure::Missing(format!(
                    "{address} sent an object with build id {}: refused",
                    super::hex(&got)
                )))
            }
            None => {
                return Err(Failure::Missing(format!(
                    "{address} sent something that is not an ELF file with a build id: refused"
                )))
            }
        }
        tmp.persist(cached).map_err(|e| io(e.error))?;
        Ok(())
    }
}

enum Failure {
    /// This server does not have it (or sent the wrong thing): the next one is asked.
    Missing(String),
    /// The server is down, hangs or fails: not asked again.
    Unreachable(String),
}
