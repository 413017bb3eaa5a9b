// Short-lived threads (issue 37): created and joined one after another, each doing a
// little work. A new thread's first samples are taken in the kernel's ret_from_fork with
// the user registers copied from its parent (the clone's return value 0, the sp on the
// fresh stack): its stack ends at the clone function. The parent's samples inside the
// clone system call keep their callers (main, pthread_create).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile double sink;

static void *work(void *arg) {
    double s = 0;
    for (int i = 0; i < 20000; i++) s += i * 0.5 / (i + 1);
    sink += s;
    return arg;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 4000;
    for (int i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, work, NULL)) return 1;
        pthread_join(t, NULL);
    }
    printf("%f\n", sink);
    return 0;
}
