//! The server's flags and `BLOBDROP_*` environment variables, parsed into one typed `Settings`, and
//! secret settings read from files (the `_FILE` convention of the official Docker images).

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;

use crate::domain::{ByteSize, PublicUrl, Quota, TrustedProxies};
use crate::store::{DatabaseLocation, StoreOptions};
use crate::telemetry::LogFormat;

#[derive(Debug, Clone, Args)]
pub struct Settings {
    /// Address to listen on.
    #[arg(long, env = "BLOBDROP_BIND", default_value = "127.0.0.1")]
    pub bind: IpAddr,

    /// Port to listen on (0 picks a free port).
    #[arg(long, env = "BLOBDROP_PORT", default_value_t = 4001)]
    pub port: u16,

    #[command(flatten)]
    pub database: DatabaseArgs,

    /// Boxed: a dozen optional settings would make `Settings` the command enum's one large variant.
    #[command(flatten)]
    pub oidc: Box<OidcArgs>,

    /// Base of the download links, e.g. https://files.example.com (default: taken from each request).
    #[arg(long, env = "BLOBDROP_PUBLIC_URL")]
    pub public_url: Option<PublicUrl>,

    /// Largest accepted upload, e.g. 10GiB (default: unlimited).
    #[arg(long, env = "BLOBDROP_MAX_UPLOAD")]
    pub max_upload: Option<ByteSize>,

    /// What each account but the owner may keep, in bytes, e.g. 5GiB, unless an admin set its own
    /// (default: unlimited).
    #[arg(long, env = "BLOBDROP_QUOTA_BYTES")]
    pub quota_bytes: Option<ByteSize>,

    /// How many files each account but the owner may keep, unless an admin set its own (default:
    /// unlimited).
    #[arg(long, env = "BLOBDROP_QUOTA_FILES")]
    pub quota_files: Option<u32>,

    /// Free space to keep on the database's file system: uploads get 507 below it, so deletes,
    /// sign-ins, the clean-up and restarts always find room (default: 10% of the file system, at
    /// least 16 MiB and at most 1 GiB; 0 turns the reserve off).
    #[arg(long, env = "BLOBDROP_MIN_FREE_SPACE")]
    pub min_free_space: Option<ByteSize>,

    /// Owner secret for uploads and the API. If unset, one is generated on first start and printed once.
    #[arg(long, env = "BLOBDROP_SHARED_SECRET", hide_env_values = true)]
    pub shared_secret: Option<String>,

    /// A file holding the owner secret (a Docker secret: /run/secrets/NAME); not with --shared-secret.
    #[arg(long, env = "BLOBDROP_SHARED_SECRET_FILE")]
    pub shared_secret_file: Option<PathBuf>,

    /// Most files one multipart form may hold; a form with more gets 413 and nothing of it is kept.
    #[arg(long, env = "BLOBDROP_MAX_FORM_FILES", default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_form_files: u32,

    /// Take only age-encrypted files (C2SP age v1): any other body, by any route, gets 415 and
    /// nothing of it is kept.
    #[arg(long, env = "BLOBDROP_REQUIRE_ENCRYPTION")]
    pub require_encryption: bool,

    /// Memory all uploads together may hold while their bytes wait to be stored, e.g. 32MiB
    /// (counted in 32 KiB chunks, at least one); an upload finding no room waits its turn.
    #[arg(long, env = "BLOBDROP_UPLOAD_MEMORY", default_value = "32MiB")]
    pub upload_memory: ByteSize,

    /// Uploads that may run at once through one guest link; more get 429 with Retry-After.
    #[arg(long, env = "BLOBDROP_GUEST_LINK_UPLOADS", default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..))]
    pub guest_link_uploads: u32,

    /// Guest uploads that may run at once from one client address; more get 429 with Retry-After.
    #[arg(long, env = "BLOBDROP_CLIENT_UPLOADS", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..))]
    pub client_uploads: u32,

    /// Seconds an upload may stall between two reads before it is abandoned.
    #[arg(long, env = "BLOBDROP_IDLE_TIMEOUT", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    pub idle_timeout_secs: u64,

    /// Log lines as text or as JSON objects.
    #[arg(long, env = "BLOBDROP_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// Minutes between clean-ups of expired and used-up files.
    #[arg(long, env = "BLOBDROP_GC_INTERVAL", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    pub gc_interval_mins: u64,

    /// Seconds an upload in flight stays safe from the clean-up of other instances sharing the
    /// database without its instance renewing its lease (renewed every third of it); an instance
    /// that died leaves its uploads to be purged that long after its last renewal. PostgreSQL only.
    #[arg(long, env = "BLOBDROP_UPLOAD_LEASE", default_value_t = 60, value_parser = clap::value_parser!(u64).range(3..))]
    pub upload_lease_secs: u64,

    /// Reverse proxies whose X-Forwarded-For is believed: comma-separated IPs or CIDR ranges
    /// (default: none, so the TCP peer is the client).
    #[arg(long, env = "BLOBDROP_TRUSTED_PROXIES", default_value = "")]
    pub trusted_proxies: TrustedProxies,

    /// Wrong secrets, tokens or file passwords a client may send in a row before it must wait.
    #[arg(long, env = "BLOBDROP_AUTH_BURST", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub auth_burst: u32,

    /// Seconds after which a throttled client may try once more.
    #[arg(long, env = "BLOBDROP_AUTH_PERIOD", default_value_t = 6, value_parser = clap::value_parser!(u64).range(1..))]
    pub auth_period_secs: u64,

    /// How long an unfinished resumable (tus) upload is kept after its last request, e.g. 24h or 7d;
    /// then it and its chunks are deleted.
    #[arg(long, env = "BLOBDROP_RESUMABLE_EXPIRY", default_value = "24h")]
    pub resumable_expiry: crate::domain::Lifetime,

    /// Seconds running uploads and downloads get to finish after SIGTERM or SIGINT.
    #[arg(long, env = "BLOBDROP_SHUTDOWN_TIMEOUT", default_value_t = 30)]
    pub shutdown_timeout_secs: u64,

    /// Seconds one webhook delivery may take (connecting, sending, the receiver's answer) before it
    /// counts as failed and is retried later.
    #[arg(long, env = "BLOBDROP_WEBHOOK_TIMEOUT", default_value_t = 10)]
    pub webhook_timeout_secs: u64,

    /// For tests of the share zips' ZIP64 records: sizes, offsets and counts from this value on
    /// use them (normally only those that do not fit 32 or 16 bits).
    #[arg(long, env = "BLOBDROP_ZIP64_THRESHOLD", default_value_t = u64::from(u32::MAX), hide = true)]
    pub zip64_threshold: u64,
}

/// Single sign-on with an OpenID Connect provider (`services::auth::oidc`): on as soon as an issuer
/// is set, which then needs the client id, its secret and `BLOBDROP_PUBLIC_URL`.
#[derive(Debug, Clone, Default, Args)]
pub struct OidcArgs {
    /// The provider's issuer URL, e.g. https://auth.example.com/application/o/blobdrop/ (its
    /// /.well-known/openid-configuration is read at the first sign-in, never at start).
    #[arg(long = "oidc-issuer", env = "BLOBDROP_OIDC_ISSUER")]
    pub issuer: Option<String>,

    /// The client id blobdrop has at the provider.
    #[arg(long = "oidc-client-id", env = "BLOBDROP_OIDC_CLIENT_ID")]
    pub client_id: Option<String>,

    /// The client's secret at the provider.
    #[arg(long = "oidc-client-secret", env = "BLOBDROP_OIDC_CLIENT_SECRET", hide_env_values = true)]
    pub client_secret: Option<String>,

    /// A file holding the client's secret (a Docker secret); not with --oidc-client-secret.
    #[arg(long = "oidc-client-secret-file", env = "BLOBDROP_OIDC_CLIENT_SECRET_FILE")]
    pub client_secret_file: Option<PathBuf>,

    /// The scopes asked for, separated by spaces (default: openid profile email).
    #[arg(long = "oidc-scopes", env = "BLOBDROP_OIDC_SCOPES")]
    pub scopes: Option<String>,

    /// The provider's name on the sign-in button, "Sign in with NAME" (default: single sign-on).
    #[arg(long = "oidc-name", env = "BLOBDROP_OIDC_NAME")]
    pub name: Option<String>,

    /// The ID token's claim that lists the person's groups (default: groups; a dotted path such
    /// as realm_access.roles reaches into an object).
    #[arg(long = "oidc-groups-claim", env = "BLOBDROP_OIDC_GROUPS_CLAIM")]
    pub groups_claim: Option<String>,

    /// Groups whose members are admins, comma-separated, read at every sign-in: everyone else
    /// signed in by the provider is a member (default: none; then roles are set on the accounts
    /// page and signing in leaves them be). A member of one gets an admin account at the first
    /// sign-in even with sign-up off.
    #[arg(long = "oidc-admin-groups", env = "BLOBDROP_OIDC_ADMIN_GROUPS")]
    pub admin_groups: Option<String>,

    /// The old name of --oidc-admin-groups (when its groups signed in as the owner); not with it.
    #[arg(long = "oidc-owner-groups", env = "BLOBDROP_OIDC_OWNER_GROUPS", hide = true)]
    pub owner_groups: Option<String>,

    /// Groups whose members may sign in with the provider at all, comma-separated (default: none,
    /// anyone may); an identity no longer in one is refused at its next sign-in.
    #[arg(long = "oidc-allowed-groups", env = "BLOBDROP_OIDC_ALLOWED_GROUPS")]
    pub allowed_groups: Option<String>,

    /// Whether an identity no account has yet gets one at its first sign-in: off (an admin makes
    /// the account, its person links the identity), on (anyone the provider signs in), groups
    /// (members of --oidc-allowed-groups only).
    #[arg(long = "oidc-sign-up", env = "BLOBDROP_OIDC_SIGN_UP", value_enum, default_value_t = OidcSignUp::Off)]
    pub sign_up: OidcSignUp,

    /// Hide the secret's sign-in form (once the owner's identity is linked or admin groups are set); the
    /// secret in Authorization keeps working for scripts.
    #[arg(long = "oidc-only", env = "BLOBDROP_OIDC_ONLY")]
    pub only: bool,
}

/// `BLOBDROP_OIDC_SIGN_UP`'s words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum OidcSignUp {
    #[default]
    Off,
    On,
    Groups,
}

/// The OpenID Connect client's secret and its `_FILE` twin.
pub const OIDC_CLIENT_SECRET: SecretSetting =
    SecretSetting { name: "BLOBDROP_OIDC_CLIENT_SECRET", flag: "oidc-client-secret" };

/// OpenID Connect settings that cannot be served: one line saying what to set.
#[derive(Debug, thiserror::Error)]
pub enum OidcSettingsError {
    #[error(
        "single sign-on is half set: {missing} missing (BLOBDROP_OIDC_ISSUER, BLOBDROP_OIDC_CLIENT_ID and BLOBDROP_OIDC_CLIENT_SECRET go together)"
    )]
    Missing { missing: String },
    #[error(
        "single sign-on needs BLOBDROP_PUBLIC_URL: the provider sends people back to BLOBDROP_PUBLIC_URL/login/oidc/callback, which must be registered there"
    )]
    NoPublicUrl,
    #[error("BLOBDROP_OIDC_ISSUER {issuer} is not an http(s) URL")]
    Issuer { issuer: String },
    #[error(
        "BLOBDROP_OIDC_ADMIN_GROUPS and its old name BLOBDROP_OIDC_OWNER_GROUPS are both set; keep BLOBDROP_OIDC_ADMIN_GROUPS"
    )]
    AdminGroupsTwice,
    #[error("BLOBDROP_OIDC_SIGN_UP=groups needs BLOBDROP_OIDC_ALLOWED_GROUPS: the groups whose members may sign up")]
    SignUpWithoutGroups,
    #[error(transparent)]
    SecretFile(#[from] SecretFileError),
}

/// What `BLOBDROP_OIDC_SCOPES` is unless set.
pub const DEFAULT_OIDC_SCOPES: &str = "openid profile email";

/// The database and how it may grow and checkpoint: the same flags, defaults and variables for the
/// server and for every command that opens the database (backup, import, verify, vacuum).
#[derive(Debug, Clone, Args)]
pub struct DatabaseArgs {
    /// SQLite database file (the server creates it and missing folders, the commands need it), or
    /// a PostgreSQL URL, postgres://USER:PASSWORD@HOST/DATABASE (the database must exist).
    #[arg(long, env = "BLOBDROP_DB", default_value = "data/blobdrop.db")]
    pub db: DatabaseLocation,

    /// WAL pages after which a commit checkpoints the WAL into the database (a thread copies pages
    /// ahead of it); 0 leaves every checkpoint to another process (Litestream).
    #[arg(long, env = "BLOBDROP_WAL_AUTOCHECKPOINT", default_value_t = crate::store::WAL_AUTOCHECKPOINT)]
    pub wal_autocheckpoint: u32,

    /// Largest the database may grow, e.g. 50GiB; uploads beyond it get 507 (default: the disk's size).
    #[arg(long, env = "BLOBDROP_MAX_DB_SIZE")]
    pub max_db_size: Option<ByteSize>,

    /// A file holding the PostgreSQL password (a Docker secret: /run/secrets/NAME), so the
    /// BLOBDROP_DB URL needs none; PostgreSQL only.
    #[arg(long, env = "BLOBDROP_DB_PASSWORD_FILE")]
    pub db_password_file: Option<PathBuf>,
}

impl DatabaseArgs {
    /// The store's options for these flags, with the default free-space reserve.
    pub fn store_options(&self) -> StoreOptions {
        StoreOptions {
            max_db_size: self.max_db_size.map(|size| size.as_u64()),
            wal_autocheckpoint: self.wal_autocheckpoint,
            min_free_space: None,
        }
    }
}

impl DatabaseArgs {
    /// The database to open: `db`, with the password of `db_password_file` in a PostgreSQL URL.
    pub fn location(&self) -> Result<DatabaseLocation, SecretFileError> {
        let password = DB_PASSWORD.resolve(None, self.db_password_file.as_deref())?;
        Ok(match (&self.db, password) {
            (DatabaseLocation::Postgres(url), Some(password)) => {
                DatabaseLocation::Postgres(with_password(url, &password))
            }
            (location, _) => location.clone(),
        })
    }
}

/// The PostgreSQL password's `_FILE` setting (there is no plain twin: the URL holds one).
pub const DB_PASSWORD: SecretSetting = SecretSetting { name: "BLOBDROP_DB_PASSWORD", flag: "db-password" };

/// `url` (`postgres://user[:old]@host/...`) with `password`, percent-encoded, as its password.
fn with_password(url: &str, password: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("postgres", url));
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let (user, host) = authority.rsplit_once('@').map_or(("", authority), |(info, host)| (info, host));
    let user = user.split(':').next().unwrap_or_default();
    let password = percent_encoding::utf8_percent_encode(password, percent_encoding::NON_ALPHANUMERIC);
    format!("{scheme}://{user}:{password}@{host}{path}")
}

/// The owner secret and its `_FILE` twin.
pub const SHARED_SECRET: SecretSetting = SecretSetting { name: "BLOBDROP_SHARED_SECRET", flag: "shared-secret" };

impl Settings {
    /// The configured owner secret, from `--shared-secret` or from `--shared-secret-file`.
    pub fn shared_secret(&self) -> Result<Option<String>, SecretFileError> {
        SHARED_SECRET.resolve(self.shared_secret.as_deref(), self.shared_secret_file.as_deref())
    }

    pub fn idle_timeout(&self) -> Duration {
        Duration::from_secs(self.idle_timeout_secs)
    }

    pub fn shutdown_timeout(&self) -> Duration {
        Duration::from_secs(self.shutdown_timeout_secs)
    }

    pub fn upload_lease(&self) -> Duration {
        Duration::from_secs(self.upload_lease_secs)
    }

    /// The limits of every account but the owner that an admin set none for.
    pub fn default_quota(&self) -> Quota {
        Quota {
            bytes: self.quota_bytes.map(|bytes| i64::try_from(bytes.as_u64()).unwrap_or(i64::MAX)),
            files: self.quota_files.map(i64::from),
        }
    }

    pub fn webhook_timeout(&self) -> Duration {
        Duration::from_secs(self.webhook_timeout_secs.max(1))
    }

    pub fn gc_interval(&self) -> Duration {
        Duration::from_secs(self.gc_interval_mins * 60)
    }
}

/// A secret setting given twice, or a file that cannot stand in for it.
#[derive(Debug, thiserror::Error)]
pub enum SecretFileError {
    #[error("{name} and {name}_FILE are both set (--{flag} and --{flag}-file); set only one")]
    BothSet { name: &'static str, flag: &'static str },
    #[error("cannot read {name}_FILE {path}")]
    Read { name: &'static str, path: String, source: std::io::Error },
    #[error("{name}_FILE {path} is empty")]
    Empty { name: &'static str, path: String },
    #[error("{name}_FILE {path} is not UTF-8 text")]
    NotText { name: &'static str, path: String },
}

/// One secret setting and its `_FILE` twin: `name` is the environment variable (`BLOBDROP_TOKEN`),
/// `flag` the long flag without dashes (`token`).
#[derive(Debug, Clone, Copy)]
pub struct SecretSetting {
    pub name: &'static str,
    pub flag: &'static str,
}

impl SecretSetting {
    /// The secret from the value or from the file, never both. Trailing newlines are not part of
    /// it: `echo secret > file` writes one, and so do most editors.
    pub fn resolve(self, value: Option<&str>, file: Option<&Path>) -> Result<Option<String>, SecretFileError> {
        // An empty variable is unset, as it is for the secret itself (compose writes `${X:-}`).
        let value = value.filter(|value| !value.is_empty());
        let Some(path) = file.filter(|path| !path.as_os_str().is_empty()) else {
            return Ok(value.map(str::to_owned));
        };
        if value.is_some() {
            return Err(SecretFileError::BothSet { name: self.name, flag: self.flag });
        }
        let shown = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|source| SecretFileError::Read {
            name: self.name,
            path: shown.clone(),
            source,
        })?;
        let text =
            String::from_utf8(bytes).map_err(|_| SecretFileError::NotText { name: self.name, path: shown.clone() })?;
        let secret = text.trim_end_matches(['\n', '\r']);
        // An empty mounted secret is a mistake; treating it as unset would silently serve with
        // another secret than the one the operator meant.
        if secret.is_empty() {
            return Err(SecretFileError::Empty { name: self.name, path: shown });
        }
        Ok(Some(secret.to_owned()))
    }
}

#[cfg(test)]
mod secret_file_tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_postgres_password_file_goes_into_the_url_encoded() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("password");
        std::fs::write(&path, "p@ss/w:rd\n").unwrap();
        let args = |db: &str, file: Option<PathBuf>| DatabaseArgs {
            db: db.parse().unwrap(),
            wal_autocheckpoint: 0,
            max_db_size: None,
            db_password_file: file,
        };
        let with_file = args("postgres://blobdrop@db:5432/blobdrop?sslmode=disable", Some(path.clone()));
        assert_eq!(
            with_file.location().unwrap(),
            DatabaseLocation::Postgres("postgres://blobdrop:p%40ss%2Fw%3Ard@db:5432/blobdrop?sslmode=disable".into())
        );
        let no_file = args("postgres://blobdrop:old@db/blobdrop", None);
        assert_eq!(
            no_file.location().unwrap(),
            DatabaseLocation::Postgres("postgres://blobdrop:old@db/blobdrop".into())
        );
        assert_eq!(args("data/x.db", Some(path)).location().unwrap(), DatabaseLocation::Sqlite("data/x.db".into()));
    }

    const SETTING: SecretSetting = SecretSetting { name: "BLOBDROP_SHARED_SECRET", flag: "shared-secret" };

    #[test]
    fn a_secret_file_loses_its_trailing_newlines_only() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("secret");
        std::fs::write(&path, " s3cret with spaces \r\n\n").unwrap();
        assert_eq!(SETTING.resolve(None, Some(&path)).unwrap().as_deref(), Some(" s3cret with spaces "));
        assert_eq!(SETTING.resolve(Some("v"), None).unwrap().as_deref(), Some("v"));
        assert_eq!(SETTING.resolve(None, None).unwrap(), None);
    }

    #[test]
    fn a_value_and_a_file_together_are_refused() {
        let error = SETTING.resolve(Some("v"), Some(Path::new("/nonexistent"))).unwrap_err();
        assert_eq!(
            error.to_string(),
            "BLOBDROP_SHARED_SECRET and BLOBDROP_SHARED_SECRET_FILE are both set \
             (--shared-secret and --shared-secret-file); set only one"
        );
    }

    #[test]
    fn an_empty_or_missing_file_is_refused() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("secret");
        std::fs::write(&path, "\n").unwrap();
        assert!(matches!(SETTING.resolve(None, Some(&path)), Err(SecretFileError::Empty { .. })));
        let missing = folder.path().join("missing");
        assert!(matches!(SETTING.resolve(None, Some(&missing)), Err(SecretFileError::Read { .. })));
    }
}
