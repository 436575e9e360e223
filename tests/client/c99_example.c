/* A C99 application of libatrace_client: built with -std=c99 -pedantic -Werror to prove
 * the header is plain C, and run by tests/client/c_abi_test.cc against a real daemon.
 * Usage: client_c99_example SOCKET OBJECT  -> prints the created file's path. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "atraced/atrace_client.h"

int main(int argc, char **argv) {
  atrace_client_options options;
  atrace_client *client = NULL;
  atrace_event_spec event;
  atrace_file_spec file;
  char path[ATRACE_PATH_MAX];
  const char *text = "written from C99\n";
  int rc;

  if (argc != 3) {
    fprintf(stderr, "usage: %s SOCKET OBJECT\n", argv[0]);
    return 2;
  }
  /* NULL arguments are refused, never crash. */
  if (atrace_client_open(NULL, NULL) != -EINVAL || atrace_emit(NULL, NULL, NULL, NULL, 0, 0, NULL, 0) != -EINVAL) {
    fprintf(stderr, "NULL arguments not refused\n");
    return 3;
  }
  atrace_client_options_init(&options);
  options.socket_path = argv[1];
  rc = atrace_client_open(&options, &client);
  if (rc != 0) {
    fprintf(stderr, "open: %s\n", atrace_client_strerror(rc));
    return 1;
  }
  memset(&event, 0, sizeof event);
  event.kind = ATRACE_EVENT_SCHEDULE;
  event.side = ATRACE_SIDE_HOST;
  memset(&file, 0, sizeof file);
  file.form = ATRACE_FILE_OBJECT;
  file.name = argv[2];
  rc = atrace_emit(client, &event, &file, text, strlen(text), 0, path, sizeof path);
  if (rc != 0) {
    fprintf(stderr, "emit: %s (%s)\n", atrace_client_strerror(rc), atrace_client_last_message(client));
    atrace_client_close(client);
    return 1;
  }
  printf("%s\n", path);
  atrace_client_close(client);
  return 0;
}
