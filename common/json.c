/* The strict reader of a flat JSON object (json.h), RFC 8259's grammar for
 * the values it takes. */
#include "json.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    const char *p;           // where the reader is
    char *err;
    size_t errlen;
} Reader;

/* err: what went wrong and where, the next few characters of the line. */
static bool fail(Reader *r, const char *what) {
    char near[16];
    size_t n = 0;
    while (n < sizeof(near) - 1 && r->p[n] && (unsigned char)r->p[n] >= 0x20) {
        near[n] = r->p[n];
        n++;
    }
    near[n] = '\0';
    snprintf(r->err, r->errlen, "%s at \"%s\"", what, n ? near : "the end of a line");
    return false;
}

static void skip_ws(Reader *r) { r->p += strspn(r->p, " \t\r\n"); }

/* A string: its text between the quotes (escapes checked, kept as written) into buf. */
static bool read_string(Reader *r, char *buf, size_t len) {
    if (*r->p != '"') return fail(r, "a string was expected");
    const char *start = ++r->p;
    while (*r->p != '"') {
        if (*r->p == '\0' || (unsigned char)*r->p < 0x20) return fail(r, "an unterminated string");
        if (*r->p == '\\') {
            r->p++;
            if (*r->p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!strchr("0123456789abcdefABCDEF", r->p[i]) || r->p[i] == '\0') return fail(r, "a bad \\u escape");
                r->p += 4;
            } else if (!*r->p || !strchr("\"\\/bfnrt", *r->p)) {
                return fail(r, "a bad escape");
            }
        }
        r->p++;
    }
    size_t n = (size_t)(r->p - start);
    if (n >= len) return fail(r, "a string too long");
    memcpy(buf, start, n);
    buf[n] = '\0';
    r->p++;
    return true;
}

/* A number as JSON writes one: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool read_number(Reader *r, char *buf, size_t len) {
    const char *s = r->p, *q = s;
    if (*q == '-') q++;
    if (*q == '0') q++;
    else if (*q >= '1' && *q <= '9') while (*q >= '0' && *q <= '9') q++;
    else return fail(r, "a value was expected");
    if (*q == '.') {
        if (!(*++q >= '0' && *q <= '9')) return fail(r, "a bad number");
        while (*q >= '0' && *q <= '9') q++;
    }
    if (*q == 'e' || *q == 'E') {
        q++;
        if (*q == '+' || *q == '-') q++;
        if (!(*q >= '0' && *q <= '9')) return fail(r, "a bad number");
        while (*q >= '0' && *q <= '9') q++;
    }
    if ((size_t)(q - s) >= len) return fail(r, "a number too long");
    memcpy(buf, s, (size_t)(q - s));
    buf[q - s] = '\0';
    r->p = q;
    return true;
}

static bool read_value(Reader *r, JsonMember *m) {
    static const struct { const char *word; JsonType type; } WORDS[] = {
        {"true", JSON_TRUE}, {"false", JSON_FALSE}, {"null", JSON_NULL}};
    if (*r->p == '{' || *r->p == '[') return fail(r, "a nested object or array (meta.json is flat)");
    if (*r->p == '"') {
        m->type = JSON_STRING;
        return read_string(r, m->text, sizeof(m->text));
    }
    for (size_t i = 0; i < sizeof(WORDS) / sizeof(WORDS[0]); i++) {
        size_t n = strlen(WORDS[i].word);
        if (strncmp(r->p, WORDS[i].word, n) == 0) {
            m->type = WORDS[i].type;
            snprintf(m->text, sizeof(m->text), "%s", WORDS[i].word);
            r->p += n;
            return true;
        }
    }
    m->type = JSON_NUMBER;
    return read_number(r, m->text, sizeof(m->text));
}

bool json_parse_flat(const char *text, JsonObject *o, char *err, size_t errlen) {
    Reader r = {text, err, errlen};
    memset(o, 0, sizeof(*o));
    skip_ws(&r);
    if (*r.p != '{') return fail(&r, "a JSON object ({\"key\": value, ...}) was expected");
    r.p++;
    skip_ws(&r);
    if (*r.p == '}') r.p++;
    else
        for (;;) {
            if (o->n == JSON_MAX_MEMBERS) return fail(&r, "more keys than a meta.json holds");
            JsonMember *m = &o->m[o->n];
            if (!read_string(&r, m->key, sizeof(m->key))) return false;
            for (int i = 0; i < o->n; i++)
                if (strcmp(o->m[i].key, m->key) == 0) {
                    snprintf(err, errlen, "the key \"%s\" is given twice", m->key);
                    return false;
                }
            skip_ws(&r);
            if (*r.p != ':') return fail(&r, "a ':' was expected");
            r.p++;
            skip_ws(&r);
            if (!read_value(&r, m)) return false;
            o->n++;
            skip_ws(&r);
            if (*r.p == '}') {
                r.p++;
                break;
            }
            if (*r.p != ',') return fail(&r, "a ',' or '}' was expected");
            r.p++;
            skip_ws(&r);
        }
    skip_ws(&r);
    if (*r.p) return fail(&r, "text after the object");
    return true;
}

JsonMember *json_find(JsonObject *o, const char *key) {
    for (int i = 0; i < o->n; i++)
        if (strcmp(o->m[i].key, key) == 0) {
            o->m[i].used = true;
            return &o->m[i];
        }
    return NULL;
}
