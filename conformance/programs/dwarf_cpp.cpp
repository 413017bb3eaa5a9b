// dwarf-cpp: C++ built without frame pointers (-O2 -g -fomit-frame-pointer): STL
// containers, std::sort with a comparison lambda, and exceptions thrown and caught on the
// hot path (unwinding through libstdc++ and libgcc_s while being sampled).
// main -> round -> sort_items (std::sort) | count_keys (std::map) | validate (throw/catch).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <vector>

struct Item {
    unsigned key;
    double weight;
};

static volatile unsigned long sink;

__attribute__((noipa)) void fill(std::vector<Item> &v, unsigned seed)
{
    unsigned x = seed;
    for (auto &it : v) {
        x = x * 1103515245u + 12345u;
        it.key = x >> 8;
        it.weight = (x & 0xffff) / 65536.0;
    }
}

__attribute__((noipa)) void sort_items(std::vector<Item> &v)
{
    std::sort(v.begin(), v.end(), [](const Item &a, const Item &b) {
        return a.key < b.key || (a.key == b.key && a.weight < b.weight);
    });
}

__attribute__((noipa)) unsigned long count_keys(const std::vector<Item> &v)
{
    std::map<unsigned, unsigned> counts;
    for (const auto &it : v)
        counts[it.key % 1024]++;
    unsigned long s = 0;
    for (const auto &kv : counts)
        s += kv.first * kv.second;
    return s;
}

__attribute__((noipa)) unsigned checked(unsigned key)
{
    if (key % 23 == 0)
        throw std::runtime_error("key divisible by 23");
    return key * 3;
}

__attribute__((noipa)) unsigned long validate(const std::vector<Item> &v)
{
    unsigned long s = 0;
    for (const auto &it : v) {
        try {
            s += checked(it.key);
        } catch (const std::exception &e) {
            s -= 1;
        }
    }
    return s;
}

__attribute__((noipa)) unsigned long round_of(std::vector<Item> &v, unsigned seed)
{
    fill(v, seed);
    sort_items(v);
    unsigned long s = count_keys(v);
    s += validate(v);
    sink += s;
    return s;
}

int main(int argc, char **argv)
{
    // Rounds of work: 120 (~0.3 s) unless told (`cargo xtask bench` records a long run).
    unsigned rounds = argc > 1 ? (unsigned)std::strtoul(argv[1], nullptr, 10) : 120;
    std::vector<Item> v(20000);
    unsigned long s = 0;
    for (unsigned r = 0; r < rounds; r++)
        s += round_of(v, r + 1);
    std::printf("%lu\n", s + sink);
    return 0;
}
