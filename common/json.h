/* meta.json as JSON: a strict reader for a flat object, `{"key": value, ...}`,
 * each value a string, a number, true, false or null. A nested object or
 * array, a key given twice, trailing text or any other departure from JSON is
 * refused with one line. The object is small: at most JSON_MAX_MEMBERS keys. */
#ifndef JSON_H
#define JSON_H

#include <stdbool.h>
#include <stddef.h>

#define JSON_MAX_MEMBERS 32

typedef enum { JSON_STRING, JSON_NUMBER, JSON_TRUE, JSON_FALSE, JSON_NULL } JsonType;

typedef struct {
    char key[64];    // the key as written between its quotes
    JsonType type;
    char text[256];  // a string's text between its quotes (escapes kept), a number as written
    bool used;       // a reader asked for it (what is never asked for is named as unused)
} JsonMember;

typedef struct {
    int n;
    JsonMember m[JSON_MAX_MEMBERS];
} JsonObject;

/* Parses text as a flat JSON object into o. false, with one line in err,
 * where it is not one. */
bool json_parse_flat(const char *text, JsonObject *o, char *err, size_t errlen);
/* The member named key, marked used, or NULL. */
JsonMember *json_find(JsonObject *o, const char *key);

#endif
