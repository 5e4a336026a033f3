/* qim_s3_sign.h: C ABI of QIM's S3 signing library (crate beside this file: rusty-s3 behind it).
 *
 * It signs, it does not send: AWS Signature V4 presigned URLs (query-string authentication) for one
 * object or a ListObjectsV2, and the parsing of a ListObjectsV2 answer. Written by hand; src/lib.rs
 * implements it.
 *
 * Errors: a function that can fail returns NULL and sets *err (when err is not NULL) to a message,
 * released with qim_s3_string_free. No Rust panic crosses this boundary: it becomes such an error.
 * Threads: a signer is immutable; any number of threads may use one at once.
 * Ownership: strings returned are released with qim_s3_string_free; a signer with qim_s3_signer_free; a
 * listing with qim_s3_listing_free (the keys it hands out live as long as it). Inputs are borrowed.
 */
#ifndef QIM_ATTACHMENTS_S3_SIGN_QIM_S3_SIGN_H_
#define QIM_ATTACHMENTS_S3_SIGN_QIM_S3_SIGN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { QIM_S3_GET = 0, QIM_S3_HEAD = 1, QIM_S3_PUT = 2, QIM_S3_DELETE = 3 };

typedef struct Signer qim_s3_signer;
typedef struct Listing qim_s3_listing;

/* A signer for `bucket` at `endpoint` (http:// or https://). path_style != 0: http://host/bucket/key;
 * 0: http://bucket.host/key. */
qim_s3_signer* qim_s3_signer_new(const char* endpoint, const char* region, const char* bucket,
                                 const char* access_key, const char* secret_key, int path_style, char** err);
void qim_s3_signer_free(qim_s3_signer* signer);

/* A URL for `method` on object `key`, valid `ttl_s` seconds (1 .. 604800). content_type (NULL: none) and
 * content_length (< 0: none) are signed headers: the request must carry exactly these values, so the
 * store refuses another type or size. */
char* qim_s3_presign(const qim_s3_signer* signer, int method, const char* key, uint64_t ttl_s,
                     const char* content_type, int64_t content_length, char** err);

/* A ListObjectsV2 URL: up to max_keys keys starting with `prefix`, after `start_after` (both may be ""). */
char* qim_s3_presign_list(const qim_s3_signer* signer, const char* prefix, const char* start_after,
                          uint32_t max_keys, uint64_t ttl_s, char** err);

/* Parses a ListObjectsV2 answer body. */
qim_s3_listing* qim_s3_parse_list(const uint8_t* xml, size_t len, char** err);
size_t qim_s3_listing_len(const qim_s3_listing* listing);
int qim_s3_listing_truncated(const qim_s3_listing* listing);
/* The i-th object's key (NULL when i is out of range), its size and LastModified (ms since the epoch). */
const char* qim_s3_listing_get(const qim_s3_listing* listing, size_t i, uint64_t* size,
                               int64_t* last_modified_ms);
void qim_s3_listing_free(qim_s3_listing* listing);

void qim_s3_string_free(char* s);

#ifdef __cplusplus
}
#endif

#endif /* QIM_ATTACHMENTS_S3_SIGN_QIM_S3_SIGN_H_ */
