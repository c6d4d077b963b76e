#include "core/jsondepth.h"

long gt_json_too_deep(const char *text, size_t len, int max)
{
	long line = 1;
	int depth = 0;
	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		if (c == '\n') {
			line++;
		} else if (c == '"') {
			/* a string: brackets inside it do not nest; a newline in it is bad JSON, counted anyway */
			for (i++; i < len && text[i] != '"'; i++) {
				if (text[i] == '\\')
					i++;
				else if (text[i] == '\n')
					line++;
			}
		} else if (c == '[' || c == '{') {
			if (++depth > max)
				return line;
		} else if ((c == ']' || c == '}') && depth > 0) {
			depth--;
		}
	}
	return 0;
}
