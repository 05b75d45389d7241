package lakecert.ucjava;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.unitycatalog.client.ApiClient;
import io.unitycatalog.client.ApiClientBuilder;
import io.unitycatalog.client.ApiException;
import io.unitycatalog.client.ApiResponse;
import io.unitycatalog.client.api.CatalogsApi;
import io.unitycatalog.client.api.DeltaCommitsApi;
import io.unitycatalog.client.api.MetastoresApi;
import io.unitycatalog.client.api.SchemasApi;
import io.unitycatalog.client.api.TablesApi;
import io.unitycatalog.client.auth.TokenProvider;
import io.unitycatalog.client.model.CreateCatalog;
import io.unitycatalog.client.model.CreateSchema;
import io.unitycatalog.client.model.CreateStagingTable;
import io.unitycatalog.client.model.CreateTable;
import io.unitycatalog.client.model.DeltaCommit;
import io.unitycatalog.client.model.DeltaGetCommits;
import io.unitycatalog.client.model.UpdateCatalog;
import io.unitycatalog.client.model.UpdateSchema;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * UC's Java client (io.unitycatalog:unitycatalog-client 0.6.0) as a client of a UC server, for
 * lakecert's test suite (tests/test_uc_java_client.py).
 *
 * <p>Usage: {@code java lakecert.ucjava.Probe URL [TOKEN]}. Reads one request per line on stdin,
 * {@code {"call": NAME, "args": {...}}}, makes that one call through the client's API classes and
 * models ({@code *WithHttpInfo}, so the HTTP status is seen) and prints one JSON line: {@code {"ok":
 * true, "status": S, "value": MODEL}} with the parsed model as the client's own mapper writes it,
 * or {@code {"ok": false, "exception": CLASS, "code": C}} when the client raised (C: the HTTP
 * status of an ApiException, else -1). The model classes are the evidence: a server answer the
 * client cannot parse ends in an exception, not in a value.
 */
public final class Probe {
  private final ObjectMapper mapper;
  private final CatalogsApi catalogs;
  private final SchemasApi schemas;
  private final TablesApi tables;
  private final DeltaCommitsApi commits;
  private final MetastoresApi metastores;

  private Probe(String url, String token) {
    Map<String, String> auth = new HashMap<>();
    auth.put("type", "static");
    auth.put("token", token);
    ApiClient api = ApiClientBuilder.create().uri(url).tokenProvider(TokenProvider.create(auth)).build();
    this.mapper = api.getObjectMapper();
    this.catalogs = new CatalogsApi(api);
    this.schemas = new SchemasApi(api);
    this.tables = new TablesApi(api);
    this.commits = new DeltaCommitsApi(api);
    this.metastores = new MetastoresApi(api);
  }

  private <T> T body(JsonNode args, Class<T> type) {
    return mapper.convertValue(args.path("body"), type);
  }

  private static String text(JsonNode args, String field) {
    JsonNode n = args.path(field);
    return n.isMissingNode() || n.isNull() ? null : n.asText();
  }

  private static Integer integer(JsonNode args, String field) {
    JsonNode n = args.path(field);
    return n.isIntegralNumber() ? n.asInt() : null;
  }

  private static Boolean bool(JsonNode args, String field) {
    JsonNode n = args.path(field);
    return n.isBoolean() ? n.asBoolean() : null;
  }

  private ApiResponse<?> call(String name, JsonNode a) throws ApiException {
    switch (name) {
      case "listCatalogs":
        return catalogs.listCatalogsWithHttpInfo(text(a, "page_token"), integer(a, "max_results"));
      case "createCatalog":
        return catalogs.createCatalogWithHttpInfo(body(a, CreateCatalog.class));
      case "getCatalog":
        return catalogs.getCatalogWithHttpInfo(text(a, "name"));
      case "updateCatalog":
        return catalogs.updateCatalogWithHttpInfo(text(a, "name"), body(a, UpdateCatalog.class));
      case "deleteCatalog":
        return catalogs.deleteCatalogWithHttpInfo(text(a, "name"), bool(a, "force"));
      case "listSchemas":
        return schemas.listSchemasWithHttpInfo(
            text(a, "catalog_name"), integer(a, "max_results"), text(a, "page_token"));
      case "createSchema":
        return schemas.createSchemaWithHttpInfo(body(a, CreateSchema.class));
      case "getSchema":
        return schemas.getSchemaWithHttpInfo(text(a, "full_name"));
      case "updateSchema":
        return schemas.updateSchemaWithHttpInfo(text(a, "full_name"), body(a, UpdateSchema.class));
      case "deleteSchema":
        return schemas.deleteSchemaWithHttpInfo(text(a, "full_name"), bool(a, "force"));
      case "createStagingTable":
        return tables.createStagingTableWithHttpInfo(body(a, CreateStagingTable.class));
      case "createTable":
        return tables.createTableWithHttpInfo(body(a, CreateTable.class));
      case "getTable":
        return tables.getTableWithHttpInfo(text(a, "full_name"), null, null);
      case "listTables":
        return tables.listTablesWithHttpInfo(
            text(a, "catalog_name"),
            text(a, "schema_name"),
            integer(a, "max_results"),
            text(a, "page_token"));
      case "deleteTable":
        return tables.deleteTableWithHttpInfo(text(a, "full_name"));
      case "commit":
        return commits.commitWithHttpInfo(body(a, DeltaCommit.class));
      case "getCommits":
        return commits.getCommitsWithHttpInfo(body(a, DeltaGetCommits.class));
      case "summary":
        return metastores.summaryWithHttpInfo();
      default:
        throw new IllegalArgumentException("unknown call " + name);
    }
  }

  private ObjectNode answer(JsonNode request) {
    ObjectNode out = mapper.createObjectNode();
    out.put("call", request.path("call").asText());
    try {
      ApiResponse<?> response = call(request.path("call").asText(), request.path("args"));
      out.put("ok", true);
      out.put("status", response.getStatusCode());
      out.set("value", mapper.valueToTree(response.getData()));
    } catch (ApiException e) {
      out.put("ok", false);
      out.put("exception", e.getClass().getName());
      out.put("code", e.getCode());
    } catch (RuntimeException e) {
      out.put("ok", false);
      out.put("exception", e.getClass().getName());
      out.put("code", -1);
      Throwable cause = e.getCause();
      if (cause != null) {
        out.put("cause", cause.getClass().getName());
      }
    }
    return out;
  }

  public static void main(String[] args) throws Exception {
    Probe probe = new Probe(args[0], args.length > 1 ? args[1] : "");
    ObjectMapper plain = new ObjectMapper();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    System.out.println("{\"ready\": true}");
    System.out.flush();
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      if (line.isBlank()) {
        continue;
      }
      System.out.println(plain.writeValueAsString(probe.answer(plain.readTree(line))));
      System.out.flush();
    }
  }
}
