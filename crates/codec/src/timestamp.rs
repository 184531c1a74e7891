//! Timestamps of tables and snapshots: Unix seconds now, and RFC 3339 UTC
//! text (`2023-11-14T22:13:20Z`) as a table's provenance and a snapshot's
//! capture time record them; [`created_now`] honours `SOURCE_DATE_EPOCH`
//! for reproducible tables. No time zones, no parsing.

#![forbid(unsafe_code)]

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, in Unix seconds (0 if the clock is before 1970).
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Format Unix seconds as RFC 3339 UTC.
pub fn rfc3339(secs: u64) -> String {
    let days = (secs / 86400) as i64;
    let rem = secs % 86400;
    // Civil-from-days (H. Hinnant).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// When tables are made, as RFC 3339 for their provenance: the time in
/// `SOURCE_DATE_EPOCH` when it is set (reproducible output, as in
/// reproducible builds), else now. An error names a value that is not a
/// number of seconds.
pub fn created_now() -> Result<String, String> {
    created_at(std::env::var("SOURCE_DATE_EPOCH").ok().as_deref())
}

/// [`created_now`] with the value of `SOURCE_DATE_EPOCH` given.
fn created_at(epoch: Option<&str>) -> Result<String, String> {
    let secs = match epoch {
        Some(v) => v
            .trim()
            .parse::<u64>()
            .map_err(|_| format!("SOURCE_DATE_EPOCH={v:?} is not a number of seconds"))?,
        None => unix_now(),
    };
    Ok(rfc3339(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_format() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn created_at_uses_the_epoch_and_refuses_a_bad_one() {
        assert_eq!(created_at(Some(" 0 ")).unwrap(), "1970-01-01T00:00:00Z");
        assert_eq!(
            created_at(Some("x")).unwrap_err(),
            "SOURCE_DATE_EPOCH=\"x\" is not a number of seconds"
        );
        assert!(created_at(None).unwrap().ends_with('Z'));
    }
}
