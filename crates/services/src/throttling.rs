//! Throttling per client address: of wrong credentials (a burst of failures, then one per period;
//! right credentials are never slowed, but while a client is refused even they are not accepted,
//! so being refused tells a guesser nothing), and of the requests through guest links that create
//! something that stays (unfinished uploads, shares).

use std::collections::HashMap;
use std::future::Future;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

/// How often forgotten clients are dropped, keeping the memory bounded by recent failures.
const FORGET_INTERVAL: Duration = Duration::from_secs(60);

/// Failures allowed at once, and how fast they come back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThrottleLimits {
    pub burst: NonZeroU32,
    pub period: Duration,
}

/// A client must wait this long before its next attempt is looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused {
    pub retry_after: Duration,
}

impl Refused {
    /// Whole seconds for `Retry-After`, never 0.
    pub fn retry_after_secs(&self) -> u64 {
        self.retry_after.as_secs_f64().ceil().max(1.0) as u64
    }
}

/// What became of one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Right,
    Wrong,
    /// Too many wrong attempts: the credentials were not accepted, whether right or wrong.
    Refused(Refused),
}

/// What failures are counted per: a client (its address, [`key`]) or an account name (its lookup
/// key, so `Anna` and `anna` are one).
pub trait ThrottleKey: Clone + Eq + std::hash::Hash + std::fmt::Display {
    /// The key failures of `self` are counted under.
    fn throttled_as(&self) -> Self;
}

impl ThrottleKey for IpAddr {
    fn throttled_as(&self) -> Self {
        key(*self)
    }
}

impl ThrottleKey for String {
    fn throttled_as(&self) -> Self {
        crate::domain::name_key(self)
    }
}

/// Failed attempts of one kind (sign-in and secrets, file passwords, or one account name's
/// passwords), per client or per name.
pub struct Throttle<K: ThrottleKey = IpAddr> {
    /// What is throttled, for the log: "owner credentials" or "file passwords".
    kind: &'static str,
    failures: DefaultKeyedRateLimiter<K>,
    refused_until: Mutex<HashMap<K, Instant>>,
}

impl<K: ThrottleKey> std::fmt::Debug for Throttle<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Throttle").field("keys", &self.failures.len()).finish()
    }
}

impl<K: ThrottleKey> Throttle<K> {
    pub fn new(kind: &'static str, limits: ThrottleLimits) -> Self {
        // A period of zero would mean no limit; governor needs at least a nanosecond.
        let quota = Quota::with_period(limits.period.max(Duration::from_nanos(1)))
            .map(|quota| quota.allow_burst(limits.burst))
            .unwrap_or_else(|| Quota::per_second(limits.burst));
        Throttle { kind, failures: RateLimiter::keyed(quota), refused_until: Mutex::default() }
    }

    /// Runs `verify` for `client` and counts a failure when it says no. A refused client is
    /// answered at once, without running `verify` (which may be a costly password hash). A right
    /// answer that ends after concurrent wrong ones used up the burst is refused as well, so a
    /// wave of parallel guesses learns nothing about those past the burst.
    pub async fn attempt<E>(&self, client: K, verify: impl Future<Output = Result<bool, E>>) -> Result<Verdict, E> {
        attempt_under(&[self], client, verify).await
    }

    /// Refuses a client (or name) that is waiting out its failures.
    pub fn admit(&self, client: K) -> Result<(), Refused> {
        let now = Instant::now();
        match self.refused().get(&client.throttled_as()) {
            Some(&until) if until > now => Err(Refused { retry_after: until - now }),
            _ => Ok(()),
        }
    }

    /// After wrong credentials: counts the failure; once the burst is used up the client is
    /// refused until a new attempt is allowed.
    fn failed(&self, client: K) -> Option<Refused> {
        let key = client.throttled_as();
        let not_until = self.failures.check_key(&key).err()?;
        let retry_after = not_until.wait_time_from(governor::clock::Clock::now(self.failures.clock()));
        self.refused().insert(key, Instant::now() + retry_after);
        // Once per refusal (a refused client is not counted again until it may try), so the log
        // shows guessing without flooding; fail2ban and the like can act on it.
        tracing::warn!(%client, kind = self.kind, retry_after_secs = retry_after.as_secs(), "too many wrong attempts; refusing");
        Some(Refused { retry_after })
    }

    /// Drops clients whose failures are all forgiven.
    pub fn forget_old_failures(&self) {
        self.failures.retain_recent();
        self.failures.shrink_to_fit();
        let now = Instant::now();
        let mut refused = self.refused();
        refused.retain(|_, until| *until > now);
        refused.shrink_to_fit();
    }

    fn refused(&self) -> std::sync::MutexGuard<'_, HashMap<K, Instant>> {
        // The map holds plain instants: one left half-updated by a panic is still sound.
        self.refused_until.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// [`Throttle::attempt`] under several throttles at once, for a credential that is tried as more
/// than one kind (a guess on a protected file's link may be the owner's secret or the file's
/// password): a client any of them refuses is refused whatever it sends, and a wrong answer
/// counts as a failure in each.
pub async fn attempt_under<K: ThrottleKey, E>(
    throttles: &[&Throttle<K>],
    client: K,
    verify: impl Future<Output = Result<bool, E>>,
) -> Result<Verdict, E> {
    let refusal = || throttles.iter().find_map(|throttle| throttle.admit(client.clone()).err());
    if let Some(refused) = refusal() {
        return Ok(Verdict::Refused(refused));
    }
    if verify.await? {
        return Ok(refusal().map_or(Verdict::Right, Verdict::Refused));
    }
    // Every throttle counts the failure, so none is skipped when another refuses first.
    let refusals: Vec<Refused> = throttles.iter().filter_map(|throttle| throttle.failed(client.clone())).collect();
    Ok(refusals.into_iter().max_by_key(|refused| refused.retry_after).map_or(Verdict::Wrong, Verdict::Refused))
}

/// [`Throttle::attempt`] of a password for an account name: refused while either the client or
/// the name is waiting out its failures, and a wrong answer counts against both. So one client
/// trying many names is slowed (credential stuffing), and so is one name tried from many clients.
pub async fn attempt_by_client_and_name<E>(
    clients: &Throttle,
    client: IpAddr,
    names: &Throttle<String>,
    name: &str,
    verify: impl Future<Output = Result<bool, E>>,
) -> Result<Verdict, E> {
    let name = name.to_owned();
    if let Err(refused) = names.admit(name.clone()) {
        return Ok(Verdict::Refused(refused));
    }
    let verdict = clients.attempt(client, verify).await?;
    Ok(match verdict {
        Verdict::Wrong => names.failed(name).map_or(Verdict::Wrong, Verdict::Refused),
        Verdict::Right => names.admit(name).err().map_or(Verdict::Right, Verdict::Refused),
        refused @ Verdict::Refused(_) => refused,
    })
}

/// One client: an IPv4 address, or an IPv6 /64 (what one host or one household is given).
fn key(client: IpAddr) -> IpAddr {
    match client.to_canonical() {
        IpAddr::V6(v6) => IpAddr::V6((u128::from(v6) & !((1u128 << 64) - 1)).into()),
        v4 => v4,
    }
}

/// Requests of one kind per client: a burst, then one per period; every request counts.
pub struct RateLimit {
    /// What is limited, for the log.
    kind: &'static str,
    requests: DefaultKeyedRateLimiter<IpAddr>,
}

impl std::fmt::Debug for RateLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimit").field("kind", &self.kind).field("clients", &self.requests.len()).finish()
    }
}

impl RateLimit {
    pub fn new(kind: &'static str, limits: ThrottleLimits) -> Self {
        let quota = Quota::with_period(limits.period.max(Duration::from_nanos(1)))
            .map(|quota| quota.allow_burst(limits.burst))
            .unwrap_or_else(|| Quota::per_second(limits.burst));
        RateLimit { kind, requests: RateLimiter::keyed(quota) }
    }

    /// Counts one request of `client`; refused past the burst until the next one is allowed.
    pub fn admit(&self, client: IpAddr) -> Result<(), Refused> {
        let not_until = match self.requests.check_key(&key(client)) {
            Ok(()) => return Ok(()),
            Err(not_until) => not_until,
        };
        let retry_after = not_until.wait_time_from(governor::clock::Clock::now(self.requests.clock()));
        tracing::info!(%client, kind = self.kind, retry_after_ms = retry_after.as_millis() as u64, "rate limited");
        Err(Refused { retry_after })
    }

    fn forget_old_requests(&self) {
        self.requests.retain_recent();
        self.requests.shrink_to_fit();
    }
}

/// Creations of resumable uploads through guest links per client: a browser sends each file of a
/// drop as one, so a folder of a few hundred files must pass at once; past that, five a second.
/// (A link's limits bound what its unfinished uploads hold; this bounds links without limits.)
pub const GUEST_UPLOADS: ThrottleLimits = ThrottleLimits { burst: burst(300), period: Duration::from_millis(200) };

/// Shares made through guest links per client: one per batch a guest sends, so a few at once,
/// then one every 10 s.
pub const GUEST_SHARES: ThrottleLimits = ThrottleLimits { burst: burst(10), period: Duration::from_secs(10) };

const fn burst(requests: u32) -> NonZeroU32 {
    match NonZeroU32::new(requests) {
        Some(requests) => requests,
        None => NonZeroU32::MIN,
    }
}

/// The throttles the server keeps, shared by all workers.
#[derive(Debug, Clone)]
pub struct Throttles {
    /// Sign-in, and the secret or API tokens in an Authorization header.
    pub owner: Arc<Throttle>,
    /// Download passwords.
    pub passwords: Arc<Throttle>,
    /// Account passwords, per name (beside `owner`, per client).
    pub names: Arc<Throttle<String>>,
    /// Resumable uploads created through guest links.
    pub guest_uploads: Arc<RateLimit>,
    /// Shares made through guest links.
    pub guest_shares: Arc<RateLimit>,
}

impl Throttles {
    pub fn new(limits: ThrottleLimits) -> Self {
        Throttles {
            owner: Arc::new(Throttle::new("owner credentials", limits)),
            passwords: Arc::new(Throttle::new("file passwords", limits)),
            names: Arc::new(Throttle::new("account passwords", limits)),
            guest_uploads: Arc::new(RateLimit::new("guest uploads created", GUEST_UPLOADS)),
            guest_shares: Arc::new(RateLimit::new("guest shares made", GUEST_SHARES)),
        }
    }

    /// Forgets old failures every minute, until the task is dropped.
    pub async fn forget_periodically(self) {
        let mut ticker = tokio::time::interval(FORGET_INTERVAL);
        loop {
            ticker.tick().await;
            self.owner.forget_old_failures();
            self.passwords.forget_old_failures();
            self.names.forget_old_failures();
            self.guest_uploads.forget_old_requests();
            self.guest_shares.forget_old_requests();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn throttle(burst: u32, period: Duration) -> Throttle {
        Throttle::new("test", ThrottleLimits { burst: NonZeroU32::new(burst).unwrap(), period })
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_burst_of_failures_passes_then_the_client_is_refused() {
        let throttle = throttle(3, Duration::from_secs(60));
        let client = ip("203.0.113.5");
        for _ in 0..3 {
            assert_eq!(throttle.admit(client), Ok(()));
            assert_eq!(throttle.failed(client), None);
        }
        let refused = throttle.failed(client).unwrap();
        assert!(refused.retry_after > Duration::from_secs(50), "{refused:?}");
        assert_eq!(refused.retry_after_secs(), 60);
        assert!(throttle.admit(client).is_err());
        // Another client is not affected.
        assert_eq!(throttle.admit(ip("203.0.113.6")), Ok(()));
    }

    #[tokio::test]
    async fn attempts_are_judged_and_refused_clients_are_not_verified() {
        let throttle = throttle(2, Duration::from_secs(60));
        let client = ip("203.0.113.5");
        let right = || async { Ok::<_, ()>(true) };
        let wrong = || async { Ok::<_, ()>(false) };
        assert_eq!(throttle.attempt(client, right()).await, Ok(Verdict::Right));
        assert_eq!(throttle.attempt(client, wrong()).await, Ok(Verdict::Wrong));
        assert_eq!(throttle.attempt(client, wrong()).await, Ok(Verdict::Wrong));
        assert!(matches!(throttle.attempt(client, wrong()).await, Ok(Verdict::Refused(_))));
        let never_run = async { panic!("a refused client's credentials are not checked") };
        assert!(matches!(throttle.attempt::<()>(client, never_run).await, Ok(Verdict::Refused(_))));
        // Errors of the check pass through uncounted.
        assert_eq!(throttle.attempt(ip("203.0.113.6"), async { Err::<bool, _>("db down") }).await, Err("db down"));
    }

    #[tokio::test]
    async fn a_right_guess_that_ends_after_concurrent_failures_used_up_the_burst_is_refused() {
        let throttle = throttle(2, Duration::from_secs(60));
        let client = ip("203.0.113.5");
        let slow_right_guess = async {
            // Meanwhile, parallel wrong guesses from the same client use up the burst.
            for _ in 0..3 {
                throttle.failed(client);
            }
            Ok::<_, ()>(true)
        };
        assert!(matches!(throttle.attempt(client, slow_right_guess).await, Ok(Verdict::Refused(_))));
    }

    #[tokio::test]
    async fn a_guess_under_two_throttles_counts_in_both_and_either_refusal_holds() {
        let (owner, passwords) = (throttle(2, Duration::from_secs(60)), throttle(5, Duration::from_secs(60)));
        let client = ip("203.0.113.5");
        let both = [&owner, &passwords];
        let wrong = || async { Ok::<_, ()>(false) };
        assert_eq!(attempt_under(&both, client, wrong()).await, Ok(Verdict::Wrong));
        assert_eq!(attempt_under(&both, client, wrong()).await, Ok(Verdict::Wrong));
        assert!(matches!(attempt_under(&both, client, wrong()).await, Ok(Verdict::Refused(_))));
        // The owner throttle refuses now, so the right answer is refused under both and alone.
        let right = || async { Ok::<_, ()>(true) };
        assert!(matches!(attempt_under(&both, client, right()).await, Ok(Verdict::Refused(_))));
        assert!(matches!(owner.attempt(client, right()).await, Ok(Verdict::Refused(_))));
        // The passwords throttle counted the same three failures, short of its burst of five.
        assert_eq!(passwords.attempt(client, right()).await, Ok(Verdict::Right));
        assert_eq!(passwords.failed(client), None);
        assert_eq!(passwords.failed(client), None);
        assert!(passwords.failed(client).is_some());
    }

    #[test]
    fn the_refusal_ends_after_the_period() {
        let throttle = throttle(1, Duration::from_millis(50));
        let client = ip("203.0.113.5");
        assert_eq!(throttle.failed(client), None);
        assert!(throttle.failed(client).is_some());
        assert!(throttle.admit(client).is_err());
        std::thread::sleep(Duration::from_millis(80));
        assert_eq!(throttle.admit(client), Ok(()));
        throttle.forget_old_failures();
        assert!(throttle.refused().is_empty());
    }

    #[test]
    fn a_rate_limit_takes_a_burst_per_client_then_refuses_until_the_period_passed() {
        let limit = RateLimit::new(
            "test",
            ThrottleLimits { burst: NonZeroU32::new(3).unwrap(), period: Duration::from_millis(50) },
        );
        let client = ip("203.0.113.5");
        for _ in 0..3 {
            assert_eq!(limit.admit(client), Ok(()));
        }
        let refused = limit.admit(client).unwrap_err();
        assert!(refused.retry_after <= Duration::from_millis(50), "{refused:?}");
        assert_eq!(limit.admit(ip("203.0.113.6")), Ok(()), "another client is not affected");
        std::thread::sleep(Duration::from_millis(80));
        assert_eq!(limit.admit(client), Ok(()));
    }

    #[test]
    fn ipv6_clients_are_counted_per_64_prefix() {
        assert_eq!(key(ip("2001:db8:1:2:aaaa::1")), key(ip("2001:db8:1:2:bbbb::2")));
        assert_ne!(key(ip("2001:db8:1:2::1")), key(ip("2001:db8:1:3::1")));
        assert_eq!(key(ip("::ffff:198.51.100.1")), ip("198.51.100.1"));
    }

    #[test]
    fn forgetting_keeps_memory_bounded() {
        let throttle = throttle(1, Duration::from_millis(10));
        for n in 0..200u8 {
            let client = IpAddr::from([198, 51, 100, n]);
            throttle.failed(client);
            throttle.failed(client);
        }
        assert_eq!(throttle.failures.len(), 200);
        std::thread::sleep(Duration::from_millis(30));
        throttle.forget_old_failures();
        assert_eq!(throttle.failures.len(), 0);
        assert!(throttle.refused().is_empty());
    }

    #[tokio::test]
    async fn a_name_tried_from_many_clients_is_refused_and_one_client_across_names_too() {
        let limits = ThrottleLimits { burst: NonZeroU32::new(2).unwrap(), period: Duration::from_secs(60) };
        let (clients, names) = (Throttle::new("clients", limits), Throttle::<String>::new("names", limits));
        let wrong = || async { Ok::<_, ()>(false) };
        let right = || async { Ok::<_, ()>(true) };
        // Three clients, one name (in any case): the third wrong guess is refused, and so is then
        // the right password from a fresh client, while another name is untouched.
        for (i, name) in ["anna", "Anna", "ANNA"].into_iter().enumerate() {
            let client = ip(&format!("203.0.113.{}", 10 + i));
            let verdict = attempt_by_client_and_name(&clients, client, &names, name, wrong()).await.unwrap();
            assert_eq!(matches!(verdict, Verdict::Refused(_)), i == 2, "{name}: {verdict:?}");
        }
        let fresh = ip("198.51.100.1");
        let verdict = attempt_by_client_and_name(&clients, fresh, &names, "anna", right()).await.unwrap();
        assert!(matches!(verdict, Verdict::Refused(_)), "{verdict:?}");
        let verdict = attempt_by_client_and_name(&clients, fresh, &names, "bert", right()).await.unwrap();
        assert_eq!(verdict, Verdict::Right);
        // One client, many names: its own throttle refuses it.
        let stuffer = ip("192.0.2.7");
        let mut verdicts = Vec::new();
        for name in ["c1", "c2", "c3"] {
            verdicts.push(attempt_by_client_and_name(&clients, stuffer, &names, name, wrong()).await.unwrap());
        }
        assert!(matches!(verdicts[2], Verdict::Refused(_)), "{verdicts:?}");
    }
}
