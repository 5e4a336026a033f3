//! QIM's S3 signing: AWS Signature V4 presigned URLs (rusty-s3) and the parsing of a ListObjectsV2 answer,
//! behind the C ABI of `qim_s3_sign.h` (beside this crate). No I/O: QIM's C++ HTTP client sends the requests.
//!
//! Every exported function catches panics (a panic becomes an error string); strings handed out are
//! allocated here and released with `qim_s3_string_free`.

use std::ffi::{c_char, c_int, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

use rusty_s3::actions::{ListObjectsV2, S3Action};
use rusty_s3::{Bucket, Credentials, UrlStyle};

/// What `qim_s3_signer_new` returns: a bucket at an endpoint and the keys to sign for it.
pub struct Signer {
    bucket: Bucket,
    credentials: Credentials,
}

/// One object of a parsed listing.
pub struct ListedObject {
    key: CString,
    size: u64,
    last_modified_ms: i64,
}

/// A parsed ListObjectsV2 answer.
pub struct Listing {
    objects: Vec<ListedObject>,
    truncated: bool,
}

pub const QIM_S3_GET: c_int = 0;
pub const QIM_S3_HEAD: c_int = 1;
pub const QIM_S3_PUT: c_int = 2;
pub const QIM_S3_DELETE: c_int = 3;

/// The 7 days S3 accepts at most for X-Amz-Expires.
const MAX_EXPIRES_S: u64 = 7 * 24 * 3600;

fn set_err(err: *mut *mut c_char, msg: String) {
    if err.is_null() {
        return;
    }
    let c = CString::new(msg.replace('\0', " ")).unwrap_or_default();
    // SAFETY: the caller passes a valid pointer to a `char*` or NULL (checked above).
    unsafe { *err = c.into_raw() };
}

fn str_arg<'a>(p: *const c_char, what: &str) -> Result<&'a str, String> {
    if p.is_null() {
        return Err(format!("{what} is NULL"));
    }
    // SAFETY: the caller passes a NUL-terminated string that outlives the call.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| format!("{what} is not UTF-8"))
}

fn opt_str_arg<'a>(p: *const c_char, what: &str) -> Result<Option<&'a str>, String> {
    if p.is_null() {
        Ok(None)
    } else {
        str_arg(p, what).map(Some)
    }
}

/// Runs `f`, turning its error or a panic into an error string in `*err` and `fallback` as the result.
fn guarded<T>(err: *mut *mut c_char, fallback: T, f: impl FnOnce() -> Result<T, String>) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => v,
        Ok(Err(msg)) => {
            set_err(err, msg);
            fallback
        }
        Err(_) => {
            set_err(err, "internal error: a panic in the S3 signing library".to_string());
            fallback
        }
    }
}

fn into_c_string(s: String) -> Result<*mut c_char, String> {
    CString::new(s)
        .map(CString::into_raw)
        .map_err(|_| "a NUL byte in the signed URL".to_string())
}

fn check_ttl(ttl_s: u64) -> Result<Duration, String> {
    if ttl_s == 0 || ttl_s > MAX_EXPIRES_S {
        return Err(format!("ttl {ttl_s} s is outside (0, {MAX_EXPIRES_S}] s"));
    }
    Ok(Duration::from_secs(ttl_s))
}

/// Makes a signer. NULL and `*err` set (free it with `qim_s3_string_free`) on a bad endpoint or bucket.
#[no_mangle]
pub extern "C" fn qim_s3_signer_new(
    endpoint: *const c_char,
    region: *const c_char,
    bucket: *const c_char,
    access_key: *const c_char,
    secret_key: *const c_char,
    path_style: c_int,
    err: *mut *mut c_char,
) -> *mut Signer {
    guarded(err, std::ptr::null_mut(), || {
        let endpoint = str_arg(endpoint, "endpoint")?;
        let url: url::Url = endpoint
            .parse()
            .map_err(|e| format!("endpoint '{endpoint}' is not a URL: {e}"))?;
        let style = if path_style != 0 {
            UrlStyle::Path
        } else {
            UrlStyle::VirtualHost
        };
        let name = str_arg(bucket, "bucket")?;
        let bucket = Bucket::new(url, style, name.to_string(), str_arg(region, "region")?.to_string())
            .map_err(|e| format!("bucket '{name}' at '{endpoint}': {e}"))?;
        let credentials = Credentials::new(
            str_arg(access_key, "access key")?.to_string(),
            str_arg(secret_key, "secret key")?.to_string(),
        );
        Ok(Box::into_raw(Box::new(Signer { bucket, credentials })))
    })
}

#[no_mangle]
pub extern "C" fn qim_s3_signer_free(signer: *mut Signer) {
    if !signer.is_null() {
        let _ = catch_unwind(|| {
            // SAFETY: `signer` came from qim_s3_signer_new and is freed once (the caller's contract).
            drop(unsafe { Box::from_raw(signer) });
        });
    }
}

/// A presigned URL for one object. `content_type` (may be NULL) and `content_length` (< 0: none) become
/// signed headers: the request must then carry exactly these values. NULL and `*err` on failure.
#[no_mangle]
pub extern "C" fn qim_s3_presign(
    signer: *const Signer,
    method: c_int,
    key: *const c_char,
    ttl_s: u64,
    content_type: *const c_char,
    content_length: i64,
    err: *mut *mut c_char,
) -> *mut c_char {
    guarded(err, std::ptr::null_mut(), || {
        // SAFETY: a live signer from qim_s3_signer_new, or NULL (checked).
        let s = unsafe { signer.as_ref() }.ok_or("signer is NULL")?;
        let key = str_arg(key, "key")?;
        let ttl = check_ttl(ttl_s)?;
        let content_type = opt_str_arg(content_type, "content type")?;
        let length = (content_length >= 0).then(|| content_length.to_string());
        let b = &s.bucket;
        let c = Some(&s.credentials);
        // Signed headers must be given sorted by name: content-length before content-type.
        macro_rules! signed {
            ($action:expr) => {{
                let mut a = $action;
                if let Some(l) = &length {
                    a.headers_mut().insert("content-length", l.clone());
                }
                if let Some(t) = content_type {
                    a.headers_mut().insert("content-type", t.to_string());
                }
                a.sign(ttl).to_string()
            }};
        }
        let url = match method {
            QIM_S3_GET => signed!(b.get_object(c, key)),
            QIM_S3_HEAD => signed!(b.head_object(c, key)),
            QIM_S3_PUT => signed!(b.put_object(c, key)),
            QIM_S3_DELETE => signed!(b.delete_object(c, key)),
            other => return Err(format!("unknown method code {other}")),
        };
        into_c_string(url)
    })
}

/// A presigned ListObjectsV2 URL: keys starting with `prefix` after `start_after` (both may be empty),
/// at most `max_keys`. NULL and `*err` on failure.
#[no_mangle]
pub extern "C" fn qim_s3_presign_list(
    signer: *const Signer,
    prefix: *const c_char,
    start_after: *const c_char,
    max_keys: u32,
    ttl_s: u64,
    err: *mut *mut c_char,
) -> *mut c_char {
    guarded(err, std::ptr::null_mut(), || {
        // SAFETY: as qim_s3_presign.
        let s = unsafe { signer.as_ref() }.ok_or("signer is NULL")?;
        let prefix = str_arg(prefix, "prefix")?;
        let start_after = str_arg(start_after, "start_after")?;
        let ttl = check_ttl(ttl_s)?;
        let mut list = ListObjectsV2::new(&s.bucket, Some(&s.credentials));
        if !prefix.is_empty() {
            list.with_prefix(prefix);
        }
        if !start_after.is_empty() {
            list.with_start_after(start_after);
        }
        list.with_max_keys(max_keys as usize);
        into_c_string(list.sign(ttl).to_string())
    })
}

fn parse_time_ms(s: &str) -> Result<i64, String> {
    let t: jiff::Timestamp = s
        .parse()
        .map_err(|e| format!("LastModified '{s}' is not a timestamp: {e}"))?;
    Ok(t.as_millisecond())
}

/// Parses a ListObjectsV2 answer (`xml`, `len` bytes). NULL and `*err` when it is not one.
#[no_mangle]
pub extern "C" fn qim_s3_parse_list(xml: *const u8, len: usize, err: *mut *mut c_char) -> *mut Listing {
    guarded(err, std::ptr::null_mut(), || {
        if xml.is_null() && len > 0 {
            return Err("xml is NULL".to_string());
        }
        let bytes = if len == 0 {
            &[][..]
        } else {
            // SAFETY: the caller passes `len` readable bytes at `xml`.
            unsafe { std::slice::from_raw_parts(xml, len) }
        };
        let text = std::str::from_utf8(bytes).map_err(|_| "the listing is not UTF-8".to_string())?;
        let parsed = ListObjectsV2::parse_response(text).map_err(|e| format!("not a ListObjectsV2 answer: {e}"))?;
        let mut objects = Vec::with_capacity(parsed.contents.len());
        for c in parsed.contents {
            let last_modified_ms = match &c.last_modified {
                Some(t) => parse_time_ms(t)?,
                None => 0,
            };
            let key = CString::new(c.key).map_err(|_| "a NUL byte in a listed key".to_string())?;
            objects.push(ListedObject {
                key,
                size: c.size.unwrap_or(0),
                last_modified_ms,
            });
        }
        let truncated = parsed.next_continuation_token.is_some();
        Ok(Box::into_raw(Box::new(Listing { objects, truncated })))
    })
}

#[no_mangle]
pub extern "C" fn qim_s3_listing_len(listing: *const Listing) -> usize {
    // SAFETY: a live listing or NULL.
    unsafe { listing.as_ref() }.map_or(0, |l| l.objects.len())
}

#[no_mangle]
pub extern "C" fn qim_s3_listing_truncated(listing: *const Listing) -> c_int {
    // SAFETY: a live listing or NULL.
    unsafe { listing.as_ref() }.map_or(0, |l| c_int::from(l.truncated))
}

/// The i-th object (NULL key when out of range); the key lives as long as the listing.
#[no_mangle]
pub extern "C" fn qim_s3_listing_get(
    listing: *const Listing,
    i: usize,
    size: *mut u64,
    last_modified_ms: *mut i64,
) -> *const c_char {
    // SAFETY: a live listing or NULL; `size` and `last_modified_ms` valid or NULL.
    let Some(o) = unsafe { listing.as_ref() }.and_then(|l| l.objects.get(i)) else {
        return std::ptr::null();
    };
    unsafe {
        if !size.is_null() {
            *size = o.size;
        }
        if !last_modified_ms.is_null() {
            *last_modified_ms = o.last_modified_ms;
        }
    }
    o.key.as_ptr()
}

#[no_mangle]
pub extern "C" fn qim_s3_listing_free(listing: *mut Listing) {
    if !listing.is_null() {
        let _ = catch_unwind(|| {
            // SAFETY: from qim_s3_parse_list, freed once.
            drop(unsafe { Box::from_raw(listing) });
        });
    }
}

#[no_mangle]
pub extern "C" fn qim_s3_string_free(s: *mut c_char) {
    if !s.is_null() {
        // SAFETY: from CString::into_raw in this library, freed once.
        drop(unsafe { CString::from_raw(s) });
    }
}
