/* peak_rss RESULT_FILE PROGRAM [ARG...]: runs PROGRAM and writes "<peak RSS in KiB>\n" of it
 * to RESULT_FILE, exiting with its status. A test that forks a program directly measures,
 * in that program's peak, what the test process held when it forked (the pages stay mapped
 * until the exec); this small program forks from nothing big. */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 3) return 125;
  pid_t pid = fork();
  if (pid < 0) return 126;
  if (pid == 0) {
    execv(argv[2], argv + 2);
    _exit(127);
  }
  int status = 0;
  struct rusage usage;
  if (wait4(pid, &status, 0, &usage) != pid) return 126;
  FILE* f = fopen(argv[1], "w");
  if (f == NULL) return 126;
  fprintf(f, "%ld\n", usage.ru_maxrss);
  fclose(f);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
