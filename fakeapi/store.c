/* store.c -- the provider's side effects: records and the idempotency table. */
#include "store.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

/* One committed write. */
struct record {
	char id[FA_STORE_ID_MAX]; /* "rec_<n>" */
	char *route;              /* owned or NULL */
	char *client_reference;   /* owned or NULL */
	char *idempotency_key;    /* owned or NULL */
	char *body_sha256;        /* owned or NULL */
	int status;               /* the answer's status */
	cJSON *body;              /* owned rendered answer body, or NULL */
	int64_t created_us;       /* when it was committed */
};

/* One idempotency key. */
struct entry {
	char *key;             /* owned */
	char *body_sha256;     /* owned; "" when the request gave none */
	bool in_flight;        /* begun, not ended */
	uint64_t owner;        /* in flight: who began it */
	int64_t since_us;      /* in flight: when it began */
	int64_t completed_us;  /* completed: when it ended */
	int64_t expires_us;    /* completed: forgotten from this instant on */
	struct record *record; /* borrowed from the records; NULL until committed */
};

struct fa_store {
	struct fa_store_spec spec; /* copy */
	pthread_mutex_t lock;      /* guards everything below */
	struct record **records;   /* owned, in commit order */
	size_t n_records;
	struct entry *entries; /* owned, in the order they began */
	size_t n_entries;
	uint64_t next_id; /* the next record is rec_<next_id> */
};

const char *fa_store_verdict_str(enum fa_store_verdict v)
{
	switch (v) {
	case FA_STORE_PROCEED: return "proceed";
	case FA_STORE_REPLAY: return "replay";
	case FA_STORE_IN_FLIGHT: return "in_flight";
	case FA_STORE_REUSED: return "reused";
	case FA_STORE_MISSING: return "missing";
	}
	return "unknown";
}

void fa_store_answer_release(struct fa_store_answer *a)
{
	if (a == NULL)
		return;
	free(a->body);
	memset(a, 0, sizeof(*a));
}

struct fa_store *fa_store_new(const struct fa_store_spec *spec)
{
	struct fa_store *s = fa_xcalloc(1, sizeof(*s));

	s->spec = *spec;
	pthread_mutex_init(&s->lock, NULL);
	s->next_id = 1;
	return s;
}

static void record_free(struct record *r)
{
	free(r->route);
	free(r->client_reference);
	free(r->idempotency_key);
	free(r->body_sha256);
	cJSON_Delete(r->body);
	free(r);
}

static void entry_release(struct entry *e)
{
	free(e->key);
	free(e->body_sha256);
}

/* Forget everything; caller holds the lock (or is the only user). */
static void clear(struct fa_store *s)
{
	for (size_t i = 0; i < s->n_records; i++)
		record_free(s->records[i]);
	free(s->records);
	s->records = NULL;
	s->n_records = 0;
	for (size_t i = 0; i < s->n_entries; i++)
		entry_release(&s->entries[i]);
	free(s->entries);
	s->entries = NULL;
	s->n_entries = 0;
}

void fa_store_free(struct fa_store *s)
{
	if (s == NULL)
		return;
	clear(s);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void fa_store_reset(struct fa_store *s)
{
	pthread_mutex_lock(&s->lock);
	clear(s);
	pthread_mutex_unlock(&s->lock);
}

/* Remove entry @i, keeping the others in the order they began (the
 * state JSON lists them so); caller holds the lock. */
static void entry_remove(struct fa_store *s, size_t i)
{
	entry_release(&s->entries[i]);
	memmove(&s->entries[i], &s->entries[i + 1], (s->n_entries - i - 1) * sizeof(*s->entries));
	s->n_entries--;
}

static bool expired(const struct entry *e, int64_t now_us)
{
	return !e->in_flight && now_us >= e->expires_us;
}

/* Forget the expired keys; caller holds the lock. */
static void purge(struct fa_store *s, int64_t now_us)
{
	for (size_t i = 0; i < s->n_entries;) {
		if (expired(&s->entries[i], now_us)) {
			entry_remove(s, i);
			continue;
		}
		i++;
	}
}

/* The entry for @key, or NULL; caller holds the lock. */
static struct entry *entry_find(struct fa_store *s, const char *key)
{
	for (size_t i = 0; i < s->n_entries; i++)
		if (strcmp(s->entries[i].key, key) == 0)
			return &s->entries[i];
	return NULL;
}

static char *answer_body(const struct record *r)
{
	if (r->body == NULL)
		return NULL;
	return fa_xcheck(cJSON_PrintUnformatted(r->body), "cJSON_PrintUnformatted");
}

enum fa_store_verdict fa_store_begin(struct fa_store *s, const char *key, const char *body_sha256,
                                     uint64_t owner, int64_t now_us, struct fa_store_answer *replay)
{
	enum fa_store_verdict v = FA_STORE_PROCEED;
	const char *sha = body_sha256 != NULL ? body_sha256 : "";
	struct entry *e;

	if (replay != NULL)
		memset(replay, 0, sizeof(*replay));
	if (s->spec.profile == FA_IDEM_NONE)
		return FA_STORE_PROCEED;
	if (key == NULL)
		return s->spec.profile == FA_IDEM_IETF && s->spec.key_required ? FA_STORE_MISSING
		                                                               : FA_STORE_PROCEED;
	pthread_mutex_lock(&s->lock);
	purge(s, now_us);
	e = entry_find(s, key);
	if (e != NULL && e->in_flight) {
		v = FA_STORE_IN_FLIGHT;
	} else if (e != NULL && strcmp(e->body_sha256, sha) != 0) {
		v = FA_STORE_REUSED;
	} else if (e != NULL) {
		v = FA_STORE_REPLAY;
		if (replay != NULL) {
			replay->status = e->record->status;
			replay->body = answer_body(e->record);
			snprintf(replay->provider_id, sizeof(replay->provider_id), "%s",
			         e->record->id);
		}
	} else {
		s->entries = fa_xrealloc(s->entries, (s->n_entries + 1) * sizeof(*s->entries));
		s->entries[s->n_entries++] = (struct entry){
			.key = fa_xstrdup(key),
			.body_sha256 = fa_xstrdup(sha),
			.in_flight = true,
			.owner = owner,
			.since_us = now_us,
		};
	}
	pthread_mutex_unlock(&s->lock);
	return v;
}

void fa_store_params_add_id(struct fa_params *p, const char *provider_id)
{
	for (size_t i = 0; i < p->n; i++) {
		if (strcmp(p->name[i], FA_STORE_ID_PARAM) == 0) {
			free(p->value[i]);
			p->value[i] = fa_xstrdup(provider_id);
			return;
		}
	}
	if (p->n == FA_ROUTE_MAX_PARAMS)
		return;
	p->name[p->n] = fa_xstrdup(FA_STORE_ID_PARAM);
	p->value[p->n] = fa_xstrdup(provider_id);
	p->n++;
}

/* A copy of @p (may be NULL) naming the record @id. */
static void params_with_id(struct fa_params *out, const struct fa_params *p, const char *id)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; p != NULL && i < p->n; i++) {
		out->name[i] = fa_xstrdup(p->name[i]);
		out->value[i] = fa_xstrdup(p->value[i]);
		out->n++;
	}
	fa_store_params_add_id(out, id);
}

enum fa_rc fa_store_commit(struct fa_store *s, const struct fa_store_write *w, uint64_t owner,
                           int64_t now_us, char id_out[FA_STORE_ID_MAX])
{
	struct entry *e = NULL;
	struct record *r;
	struct fa_params params;
	enum fa_rc rc = FA_ESTATE;

	pthread_mutex_lock(&s->lock);
	if (s->spec.profile != FA_IDEM_NONE && w->idempotency_key != NULL) {
		e = entry_find(s, w->idempotency_key);
		if (e != NULL && !(e->in_flight && e->owner == owner))
			e = NULL; /* someone else's key, or a reset in between */
	}
	if (e != NULL && e->record != NULL)
		goto out;
	r = fa_xcalloc(1, sizeof(*r));
	snprintf(r->id, sizeof(r->id), "rec_%llu", (unsigned long long)s->next_id++);
	r->route = fa_xstrdup(w->route);
	r->client_reference = fa_xstrdup(w->client_reference);
	r->idempotency_key = fa_xstrdup(w->idempotency_key);
	r->body_sha256 = fa_xstrdup(w->body_sha256);
	r->status = w->status;
	params_with_id(&params, w->params, r->id);
	r->body = fa_route_render(w->body, &params);
	fa_params_release(&params);
	r->created_us = now_us;
	s->records = fa_xrealloc(s->records, (s->n_records + 1) * sizeof(*s->records));
	s->records[s->n_records++] = r;
	if (e != NULL)
		e->record = r;
	if (id_out != NULL)
		snprintf(id_out, FA_STORE_ID_MAX, "%s", r->id);
	rc = FA_OK;
out:
	pthread_mutex_unlock(&s->lock);
	return rc;
}

void fa_store_end(struct fa_store *s, const char *key, uint64_t owner, int64_t now_us)
{
	struct entry *e;

	if (key == NULL)
		return;
	pthread_mutex_lock(&s->lock);
	e = entry_find(s, key);
	if (e == NULL || !e->in_flight || e->owner != owner)
		goto out;
	if (e->record == NULL) {
		entry_remove(s, (size_t)(e - s->entries));
		goto out;
	}
	e->in_flight = false;
	e->completed_us = now_us;
	e->expires_us = now_us + (int64_t)s->spec.retention_s * 1000000;
out:
	pthread_mutex_unlock(&s->lock);
}

static void add_str_or_null(cJSON *o, const char *name, const char *v)
{
	if (v != NULL)
		cJSON_AddStringToObject(o, name, v);
	else
		cJSON_AddNullToObject(o, name);
}

static cJSON *record_json(const struct record *r)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "id", r->id);
	add_str_or_null(o, "route", r->route);
	add_str_or_null(o, "client_reference", r->client_reference);
	add_str_or_null(o, "idempotency_key", r->idempotency_key);
	add_str_or_null(o, "body_sha256", r->body_sha256);
	cJSON_AddNumberToObject(o, "status", r->status);
	if (r->body != NULL)
		cJSON_AddItemToObject(o, "body",
		                      fa_xcheck(cJSON_Duplicate(r->body, 1), "cJSON_Duplicate"));
	else
		cJSON_AddNullToObject(o, "body");
	cJSON_AddNumberToObject(o, "created_us", (double)r->created_us);
	return o;
}

cJSON *fa_store_by_client_reference(struct fa_store *s, const char *ref)
{
	cJSON *arr = cJSON_CreateArray();

	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; ref != NULL && i < s->n_records; i++) {
		const struct record *r = s->records[i];

		if (r->client_reference != NULL && strcmp(r->client_reference, ref) == 0)
			cJSON_AddItemToArray(arr, record_json(r));
	}
	pthread_mutex_unlock(&s->lock);
	return arr;
}

static cJSON *operation_json(const char *key, bool in_flight, const struct record *r)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "idempotency_key", key);
	cJSON_AddStringToObject(o, "status", in_flight ? "in_flight" : "completed");
	if (r != NULL)
		cJSON_AddItemToObject(o, "record", record_json(r));
	else
		cJSON_AddNullToObject(o, "record");
	return o;
}

cJSON *fa_store_by_key(struct fa_store *s, const char *key, int64_t now_us)
{
	const struct entry *e;
	cJSON *out = NULL;

	if (key == NULL)
		return NULL;
	pthread_mutex_lock(&s->lock);
	if (s->spec.profile == FA_IDEM_NONE) {
		for (size_t i = s->n_records; out == NULL && i > 0; i--) {
			const struct record *r = s->records[i - 1];

			if (r->idempotency_key != NULL && strcmp(r->idempotency_key, key) == 0)
				out = operation_json(key, false, r);
		}
		goto out;
	}
	purge(s, now_us);
	e = entry_find(s, key);
	if (e != NULL)
		out = operation_json(key, e->in_flight, e->record);
out:
	pthread_mutex_unlock(&s->lock);
	return out;
}

size_t fa_store_count(struct fa_store *s, const char *ref)
{
	size_t n = 0;

	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->n_records; i++) {
		const char *cr = s->records[i]->client_reference;

		if (ref == NULL || (cr != NULL && strcmp(cr, ref) == 0))
			n++;
	}
	pthread_mutex_unlock(&s->lock);
	return n;
}

static const char *profile_str(enum fa_idem_profile p)
{
	switch (p) {
	case FA_IDEM_NONE: return "none";
	case FA_IDEM_PAYMENT: return "payment";
	case FA_IDEM_IETF: return "ietf";
	}
	return "unknown";
}

static void add_record_id(cJSON *o, const struct record *r)
{
	add_str_or_null(o, "record", r != NULL ? r->id : NULL);
}

cJSON *fa_store_json(struct fa_store *s, int64_t now_us)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *records, *keys, *in_flight;

	pthread_mutex_lock(&s->lock);
	purge(s, now_us);
	cJSON_AddStringToObject(o, "profile", profile_str(s->spec.profile));
	cJSON_AddNumberToObject(o, "retention_s", s->spec.retention_s);
	cJSON_AddNumberToObject(o, "next_id", (double)s->next_id);
	records = cJSON_AddArrayToObject(o, "records");
	for (size_t i = 0; i < s->n_records; i++)
		cJSON_AddItemToArray(records, record_json(s->records[i]));
	keys = cJSON_AddArrayToObject(o, "keys");
	in_flight = cJSON_AddArrayToObject(o, "in_flight");
	for (size_t i = 0; i < s->n_entries; i++) {
		const struct entry *e = &s->entries[i];
		cJSON *k = cJSON_CreateObject();

		cJSON_AddStringToObject(k, "idempotency_key", e->key);
		cJSON_AddStringToObject(k, "body_sha256", e->body_sha256);
		add_record_id(k, e->record);
		if (e->in_flight) {
			cJSON_AddNumberToObject(k, "owner", (double)e->owner);
			cJSON_AddNumberToObject(k, "since_us", (double)e->since_us);
			cJSON_AddItemToArray(in_flight, k);
		} else {
			cJSON_AddNumberToObject(k, "completed_us", (double)e->completed_us);
			cJSON_AddNumberToObject(k, "expires_us", (double)e->expires_us);
			cJSON_AddItemToArray(keys, k);
		}
	}
	pthread_mutex_unlock(&s->lock);
	return o;
}
