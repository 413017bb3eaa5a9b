/* dwarf-solib, the shared library (libhot.so, -O2 -g -fomit-frame-pointer -fPIC
 * -shared): the hot code. hot_entry -> hot_mid -> hot_leaf, and a callback into the
 * program every round. */
static volatile unsigned long hot_sink;

__attribute__((noipa)) unsigned long hot_leaf(unsigned long n, unsigned long seed)
{
    unsigned long s = seed;
    for (unsigned long i = 0; i < n; i++)
        s = (s ^ i) * 0x100000001b3ul;
    return s;
}

__attribute__((noipa)) static unsigned long hot_mid(int k)
{
    unsigned long r = hot_leaf(25000 + (k & 7), (unsigned long)k);
    hot_sink += r;
    return r + 1;
}

unsigned long hot_entry(long rounds, unsigned long (*each)(unsigned long))
{
    unsigned long acc = 0;
    for (long i = 0; i < rounds; i++) {
        acc += hot_mid((int)i);
        acc = each(acc);
    }
    return acc;
}
