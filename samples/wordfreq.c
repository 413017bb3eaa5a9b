/* wordfreq: the program behind samples/wordfreq.data, the README's first example.
 * It makes up a text, splits it into words, counts them in a hash table, sorts them by
 * count and prints the top ones: a call graph with a few levels, all in this file (no
 * time in the C library, whose code has no frame pointers).
 *
 * Recorded with (see samples/README.md):
 *   gcc -O2 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
 *       -fno-inline-functions-called-once -fno-tree-loop-distribute-patterns -o wordfreq wordfreq.c
 *   perf record -e cpu-clock:u -F 1999 -g -o wordfreq.data ./wordfreq */
#include <stdio.h>

#define WORDS (1 << 22)
#define SLOTS (1 << 17)

static unsigned long long rng_state = 88172645463325252ULL;
static char text[WORDS * 8];
static struct entry { const char *word; unsigned len, count; } table[SLOTS];
static struct entry *order[SLOTS], *scratch[SLOTS];

__attribute__((noinline)) static unsigned rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)rng_state;
}

__attribute__((noinline)) static size_t make_word(char *out)
{
    static const char syllables[][4] = {"ka", "lo", "mi", "nu", "pe", "ra", "si", "to",
                                        "be", "da", "fu", "gi", "ho", "ju", "ve", "zo"};
    /* Zipf-like: short words are far more common. */
    unsigned n = 1 + (rng() % 3 == 0) + (rng() % 7 == 0) + (rng() % 15 == 0);
    size_t len = 0;
    for (unsigned i = 0; i < n; i++) {
        const char *s = syllables[rng() % 16];
        out[len++] = s[0];
        out[len++] = s[1];
    }
    return len;
}

__attribute__((noinline)) static size_t generate_text(void)
{
    size_t at = 0;
    for (unsigned i = 0; i < WORDS; i++) {
        at += make_word(text + at);
        text[at++] = ' ';
    }
    return at;
}

__attribute__((noinline)) static unsigned hash_word(const char *w, unsigned len)
{
    unsigned h = 2166136261u;
    for (unsigned i = 0; i < len; i++)
        h = (h ^ (unsigned char)w[i]) * 16777619u;
    return h;
}

__attribute__((noinline)) static int same_word(const char *a, const char *b, unsigned len)
{
    for (unsigned i = 0; i < len; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

__attribute__((noinline)) static void count_word(const char *w, unsigned len)
{
    unsigned i = hash_word(w, len) & (SLOTS - 1);
    while (table[i].word && (table[i].len != len || !same_word(table[i].word, w, len)))
        i = (i + 1) & (SLOTS - 1);
    table[i].word = w;
    table[i].len = len;
    table[i].count++;
}

__attribute__((noinline)) static void count_words(size_t n)
{
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        if (text[i] == ' ') {
            count_word(text + start, (unsigned)(i - start));
            start = i + 1;
        }
    }
}

__attribute__((noinline)) static void merge(struct entry **a, size_t mid, size_t n)
{
    size_t i = 0, j = mid, k = 0;
    while (i < mid && j < n)
        scratch[k++] = a[i]->count >= a[j]->count ? a[i++] : a[j++];
    while (i < mid)
        scratch[k++] = a[i++];
    while (j < n)
        scratch[k++] = a[j++];
    for (k = 0; k < n; k++)
        a[k] = scratch[k];
}

__attribute__((noinline)) static void merge_sort(struct entry **a, size_t n)
{
    if (n < 2)
        return;
    merge_sort(a, n / 2);
    merge_sort(a + n / 2, n - n / 2);
    merge(a, n / 2, n);
}

__attribute__((noinline)) static size_t sort_by_count(void)
{
    size_t n = 0;
    for (size_t i = 0; i < SLOTS; i++)
        if (table[i].word)
            order[n++] = &table[i];
    /* Sort a few times over: sorting is the third phase of the profile. */
    for (int round = 0; round < 400; round++)
        merge_sort(order, n);
    return n;
}

int main(void)
{
    size_t n = 0;
    for (int round = 0; round < 3; round++) {
        rng_state = 88172645463325252ULL;
        n = generate_text();
    }
    for (int round = 0; round < 6; round++)
        count_words(n);
    size_t distinct = sort_by_count();
    printf("%zu words, %zu distinct; most common:", (size_t)WORDS, distinct);
    for (size_t i = 0; i < 5 && i < distinct; i++)
        printf(" %.*s(%u)", (int)order[i]->len, order[i]->word, order[i]->count);
    printf("\n");
    return 0;
}
