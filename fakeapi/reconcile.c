/* reconcile.c -- the reconciliation reads: what became of a write whose outcome the client could
 * not see. */
#include "reconcile.h"

#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "alloc.h"
#include "exchange.h"
#include "fault.h"
#include "store.h"
#include "utf8.h"

/* The id of GET /v1/operations/{id}, or NULL for another path. */
static const char *operation_path_key(const char *path)
{
	static const char prefix[] = "/v1/operations/";
	const char *k;

	if (strncmp(path, prefix, sizeof(prefix) - 1) != 0)
		return NULL;
	k = path + sizeof(prefix) - 1;
	return k[0] != '\0' && strchr(k, '/') == NULL ? k : NULL;
}

/* GET /v1/records?client_reference=R (@has_ref: the query has one), when
 * @spec keeps it on */
static bool reference_read(const struct fa_store_spec *spec, const char *path, bool has_ref)
{
	return spec->by_client_reference && has_ref && strcmp(path, "/v1/records") == 0;
}

static bool by_reference(const struct fa_store_spec *spec, const struct fa_req *req)
{
	return reference_read(spec, req->path, fa_req_query(req, "client_reference") != NULL);
}

bool fa_reconcile_is_read_of(const struct fa_store_spec *spec, const char *method, const char *path,
                             bool by_reference)
{
	if (strcmp(method, "GET") != 0)
		return false;
	return reference_read(spec, path, by_reference) ||
	       (spec->by_operation && operation_path_key(path) != NULL);
}

bool fa_reconcile_is_read(const struct fa_store_spec *spec, const struct fa_req *req)
{
	return fa_reconcile_is_read_of(spec, req->method, req->path,
	                               fa_req_query(req, "client_reference") != NULL);
}

bool fa_reconcile_answer(const struct fa_store_spec *spec, struct fa_store *store,
                         const struct fa_req *req, int64_t now_us, struct fa_resp *resp)
{
	struct fa_attempt *a = &resp->attempt;
	cJSON *body, *found;

	if (!fa_reconcile_is_read(spec, req))
		return false;
	if (by_reference(spec, req)) {
		a->route = fa_xstrdup("_reconcile_records");
		free(a->client_reference);
		a->client_reference = fa_utf8_clean(fa_req_query(req, "client_reference"));
		body = cJSON_CreateObject();
		cJSON_AddItemToObject(body, "records",
		                      fa_store_by_client_reference(store, a->client_reference));
		fa_resp_set_json(resp, 200, body);
		cJSON_Delete(body);
		a->status = 200;
	} else {
		char *clean = fa_utf8_clean(operation_path_key(req->path));

		a->route = fa_xstrdup("_reconcile_operation");
		found = fa_store_by_key(store, clean, now_us);
		free(clean);
		if (found == NULL) {
			cJSON *e;

			found = cJSON_CreateObject();
			e = cJSON_AddObjectToObject(found, "error");
			cJSON_AddStringToObject(e, "code", "operation_not_found");
			cJSON_AddStringToObject(e, "message",
			                        "no operation with this Idempotency-Key");
			a->status = 404;
		} else {
			a->status = 200;
		}
		fa_resp_set_json(resp, a->status, found);
		cJSON_Delete(found);
	}
	a->fault = fa_xstrdup(fa_fault_str(FA_FAULT_RESPOND));
	return true;
}
