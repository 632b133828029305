/* Line numbers and plain nulls for the libyaml readers (yamlscan.h). */
#include "yamlscan.h"

#include <string.h>

size_t yscan_line_of_offset(const char *data, size_t len, size_t off) {
        size_t line = 1;
        const unsigned char *d = (const unsigned char *) data;
        for (size_t i = 0; i < off && i < len; i++) {
                if (d[i] == '\n' || (d[i] == '\r' && (i + 1 >= len || d[i + 1] != '\n')))
                        line++;
                else if (d[i] == 0xc2 && i + 1 < len && d[i + 1] == 0x85)
                        line++, i++;
                else if (d[i] == 0xe2 && i + 2 < len && d[i + 1] == 0x80 && (d[i + 2] == 0xa8 || d[i + 2] == 0xa9))
                        line++, i += 2;
        }
        return line;
}

size_t yscan_clamp_line(const char *data, size_t len, size_t line) {
        size_t last = yscan_line_of_offset(data, len, len);
        if (len && last > 1) {
                unsigned char c = (unsigned char) data[len - 1];
                if (c == '\n' || c == '\r' || c == 0x85 || c == 0xa8 || c == 0xa9)
                        last--;
        }
        return line > last ? last : line;
}

bool yscan_plain_is_null(const char *s, size_t n) {
        static const char *const nulls[] = { "", "~", "null", "Null", "NULL", NULL };
        for (const char *const *p = nulls; *p; p++)
                if (strlen(*p) == n && memcmp(*p, s, n) == 0)
                        return true;
        return false;
}
