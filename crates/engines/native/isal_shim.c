/* cannery's shim over ISA-L (feature `isal`): keeps every ISA-L structure
 * on the C side, compiled against the installed <isa-l/igzip_lib.h>, and
 * gives Rust plain arrays. It gathers one buffer's histogram, builds ISA-L's
 * own table from counts, fills a table from cannery's field values, and
 * compresses one buffer at level 0 with a table. Nothing else. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <isa-l/igzip_lib.h>

_Static_assert(IGZIP_DIST_TABLE_SIZE == 2, "cannery expects ISA-L built without LONGER_HUFFTABLE");
_Static_assert(IGZIP_LEN_TABLE_SIZE == 256, "unexpected IGZIP_LEN_TABLE_SIZE");
_Static_assert(IGZIP_LIT_TABLE_SIZE == 257, "unexpected IGZIP_LIT_TABLE_SIZE");
_Static_assert(IGZIP_DECODE_OFFSET == 0, "unexpected IGZIP_DECODE_OFFSET");
_Static_assert(ISAL_DEF_MAX_HDR_SIZE == 328, "unexpected ISAL_DEF_MAX_HDR_SIZE");

/* Histogram of `len` bytes on their own (one end-of-block). */
void cannery_isal_histogram(const uint8_t *in, int len, uint64_t *ll, uint64_t *d)
{
	struct isal_huff_histogram *h = calloc(1, sizeof(*h));
	if (h == NULL)
		abort();
	isal_update_histogram((uint8_t *)in, len, h);
	memcpy(ll, h->lit_len_histogram, sizeof(h->lit_len_histogram));
	memcpy(d, h->dist_histogram, sizeof(h->dist_histogram));
	free(h);
}

size_t cannery_isal_hufftables_size(void)
{
	return sizeof(struct isal_hufftables);
}

/* ISA-L's own table for counts (isal_create_hufftables); its return code. */
int cannery_isal_create(void *tables, const uint64_t *ll, const uint64_t *d)
{
	struct isal_huff_histogram *h = calloc(1, sizeof(*h));
	int r;
	if (h == NULL)
		abort();
	memcpy(h->lit_len_histogram, ll, sizeof(h->lit_len_histogram));
	memcpy(h->dist_histogram, d, sizeof(h->dist_histogram));
	r = isal_create_hufftables((struct isal_hufftables *)tables, h);
	free(h);
	return r;
}

/* A table from its field values (cannery_export::isal::IsalTables). */
void cannery_isal_fill(void *tables, const uint8_t *hdr, uint32_t hdr_len, uint32_t count,
		       uint32_t extra_bits, const uint32_t *dist_table, const uint32_t *len_table,
		       const uint16_t *lit_table, const uint8_t *lit_sizes,
		       const uint16_t *dcodes, const uint8_t *dcodes_sizes)
{
	struct isal_hufftables *t = tables;
	memset(t, 0, sizeof(*t));
	memcpy(t->deflate_hdr, hdr, hdr_len);
	t->deflate_hdr_count = count;
	t->deflate_hdr_extra_bits = extra_bits;
	memcpy(t->dist_table, dist_table, sizeof(t->dist_table));
	memcpy(t->len_table, len_table, sizeof(t->len_table));
	memcpy(t->lit_table, lit_table, sizeof(t->lit_table));
	memcpy(t->lit_table_sizes, lit_sizes, sizeof(t->lit_table_sizes));
	memcpy(t->dcodes, dcodes, sizeof(t->dcodes));
	memcpy(t->dcodes_sizes, dcodes_sizes, sizeof(t->dcodes_sizes));
}

/* Header bits a table writes before each stream's body. */
uint32_t cannery_isal_header_bits(const void *tables)
{
	const struct isal_hufftables *t = tables;
	return t->deflate_hdr_count * 8 + t->deflate_hdr_extra_bits;
}

/* `len` bytes as one raw deflate stream at level 0 with `tables`; the
 * stream's length, or -1 if it does not fit in `cap` bytes. */
long cannery_isal_compress(const void *tables, const uint8_t *in, uint32_t len, uint8_t *out,
			   uint32_t cap)
{
	struct isal_zstream *s = calloc(1, sizeof(*s));
	long r;
	if (s == NULL)
		abort();
	isal_deflate_stateless_init(s);
	s->level = 0;
	s->hufftables = (struct isal_hufftables *)tables;
	s->end_of_stream = 1;
	s->flush = NO_FLUSH;
	s->next_in = (uint8_t *)in;
	s->avail_in = len;
	s->next_out = out;
	s->avail_out = cap;
	r = isal_deflate_stateless(s) == COMP_OK ? (long)s->total_out : -1;
	free(s);
	return r;
}
