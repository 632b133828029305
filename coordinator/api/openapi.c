/* GET /api/v2/openapi.json and /api/v2/openapi.yaml: the API described
 * (openapi/muster.yaml), no token needed. The daemon reads the document
 * and makes its JSON once at start; these answer copies of the two texts. */
#include <stdlib.h>
#include <string.h>

#include "api/api.h"

static void answer(struct http_response *resp, const char *text, const char *content_type) {
        if (!text) {
                http_error(resp, 404, "this musterd serves no OpenAPI document ([server] openapi_file)");
                return;
        }
        char *copy = strdup(text);
        if (!copy) {
                http_error(resp, 500, "out of memory");
                return;
        }
        http_text(resp, 200, copy, strlen(copy), content_type);
}

void api_openapi_json(void *app, struct http_request *req, struct http_response *resp) {
        answer(resp, ((struct api *) app)->openapi_json, "application/json");
}

void api_openapi_yaml(void *app, struct http_request *req, struct http_response *resp) {
        answer(resp, ((struct api *) app)->openapi_yaml, "application/yaml");
}
