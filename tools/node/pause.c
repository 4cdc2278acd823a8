/* The Pod sandbox's process for `scripts/testenv up --node` (the image plumb.local/pause): it only
   holds the Pod's namespaces open. It sleeps until SIGINT or SIGTERM, so that stopping a sandbox
   does not wait for a SIGKILL, and reaps children when it is PID 1 of a shared PID namespace. */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static void quit(int s) { (void)s; _exit(0); }

static void reap(int s) {
  (void)s;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(void) {
  struct sigaction q = {.sa_handler = quit};
  struct sigaction r = {.sa_handler = reap, .sa_flags = SA_NOCLDSTOP};
  if (sigaction(SIGINT, &q, NULL) < 0 || sigaction(SIGTERM, &q, NULL) < 0 ||
      sigaction(SIGCHLD, &r, NULL) < 0)
    return 1;
  for (;;)
    pause();
}
