// C++ operators inlined into their callers (issue 37): a call operator inlined into
// std::for_each, operator[], operator<, operator<<, a class's operator new, a
// conversion operator, a lambda, and std::sort's comparison (operator() templates).
// Inline frames name them from DWARF, as perf does; `perfdata collapse --inline` must
// fold them as `perf script | inferno-collapse-perf` does.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <vector>

struct Acc {
    double sum = 0;
    void operator()(double x) {
        for (int i = 0; i < 50; i++) sum += x * i / (i + 1.5);
    }
};

struct Vec {
    std::vector<double> v;
    double operator[](size_t i) const {
        double s = 0;
        for (int k = 0; k < 40; k++) s += v[i] * k / (k + 2.5);
        return s;
    }
};

struct Key {
    int a, b;
    bool operator<(const Key& o) const { return a * 31 % 17 + b < o.a * 31 % 17 + o.b; }
    explicit operator bool() const {
        int s = 0;
        for (int k = 0; k < 100; k++) s += (a ^ k) * b;
        return s != 7;
    }
};

struct Out {
    double v = 0;
};
inline Out& operator<<(Out& o, double x) {
    for (int i = 0; i < 50; i++) o.v += x / (i + 1.25);
    return o;
}

struct Arena {
    char buf[1 << 16];
    size_t off = 0;
};
struct Node {
    double d[8];
    static void* operator new(size_t n, Arena& a) {
        size_t s = 0;
        for (int k = 0; k < 20; k++) s += (a.off ^ k) & 7;
        a.off = (a.off + n + (s & 8)) % ((1 << 16) - 256);
        return a.buf + a.off;
    }
};

static double sink;

int main(int argc, char** argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 120;
    std::vector<double> xs(20000);
    for (size_t i = 0; i < xs.size(); i++) xs[i] = (double)(i % 97);
    Vec vec{xs};
    Out out;
    static Arena arena;
    for (int r = 0; r < rounds; r++) {
        Acc acc = std::for_each(xs.begin(), xs.end(), Acc{});
        sink += acc.sum;
        for (size_t i = 0; i < 2000; i++) sink += vec[i];
        std::vector<Key> keys(3000);
        for (size_t i = 0; i < keys.size(); i++) keys[i] = Key{(int)(i * 7919 % 1000), (int)(i % 13)};
        std::sort(keys.begin(), keys.end());
        int t = 0;
        for (auto& k : keys)
            if (k) t++;
        sink += t;
        for (size_t i = 0; i < 2000; i++) out << xs[i];
        int scale = r;
        auto lam = [&](int x) {
            double s = 0;
            for (int k = 0; k < 30; k++) s += (x + scale) * 1.0 / (k + 1);
            return s;
        };
        for (int i = 0; i < 3000; i++) sink += lam(i);
        for (int i = 0; i < 4000; i++) {
            Node* n = new (arena) Node();
            n->d[0] = i;
            sink += n->d[0];
        }
    }
    sink += out.v;
    printf("%f\n", sink);
}
