/* digest.h -- SHA-256 in hex, through OpenSSL. */
#ifndef FA_DIGEST_H
#define FA_DIGEST_H

#include <stddef.h>

/* Length of a hex SHA-256 with its NUL. */
#define FA_SHA256_HEX 65

/* Write the lowercase hex SHA-256 of @len bytes at @data into @out. */
void fa_digest_sha256_hex(const void *data, size_t len, char out[FA_SHA256_HEX]);

#endif
