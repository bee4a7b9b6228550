#include <curl/curl.h>

// Typed forms of libcurl's variadic calls (curl_easy_setopt, curl_easy_getinfo), which Swift cannot import.

static inline CURLcode ferry_curl_global_init(void) {
    return curl_global_init(CURL_GLOBAL_DEFAULT);
}

static inline CURLcode ferry_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ferry_curl_setopt_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ferry_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ferry_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ferry_curl_setopt_list(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

typedef size_t (*ferry_curl_data_callback)(char *buffer, size_t size, size_t count, void *user);
typedef int (*ferry_curl_progress_callback)(void *user, curl_off_t downloadTotal, curl_off_t downloaded,
                                            curl_off_t uploadTotal, curl_off_t uploaded);
typedef CURLcode (*ferry_curl_ssl_context_callback)(CURL *handle, void *sslContext, void *user);

static inline CURLcode ferry_curl_set_write_callback(CURL *handle, ferry_curl_data_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}

static inline CURLcode ferry_curl_set_read_callback(CURL *handle, ferry_curl_data_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_READFUNCTION, callback);
}

static inline CURLcode ferry_curl_set_progress_callback(CURL *handle, ferry_curl_progress_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}

static inline CURLcode ferry_curl_set_ssl_context_callback(CURL *handle, ferry_curl_ssl_context_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_SSL_CTX_FUNCTION, callback);
}

static inline long ferry_curl_response_code(CURL *handle) {
    long code = 0;
    if (curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &code) != CURLE_OK) return 0;
    return code;
}

static inline size_t ferry_curl_read_abort(void) {
    return CURL_READFUNC_ABORT;
}
