// Starts the embedded GraphiQL (UMD globals React, ReactDOM and GraphiQL) against the
// catalogue's endpoint, with the server's API key when the page carries one.
(function () {
  'use strict';
  var meta = function (name) {
    var el = document.querySelector('meta[name="' + name + '"]');
    return el ? el.getAttribute('content') : '';
  };
  var root = document.getElementById('graphiql');
  if (!window.React || !window.ReactDOM || !window.GraphiQL) {
    root.innerHTML = '';
    var p = document.createElement('p');
    p.className = 'graphiql-failed';
    p.textContent = 'GraphiQL\u2019s files did not load (they are embedded in the server: reload the page), or use the explorer\u2019s query console at /#/console.';
    root.appendChild(p);
    return;
  }
  var url = new URL(meta('catalogue-endpoint') || '/graphql', location.href).href;
  var key = meta('catalogue-api-key');
  var headers = key ? { Authorization: 'Bearer ' + key } : {};
  var defaultQuery = [
    '# The Capability Catalogue API. Every response carries',
    '# extensions.dynamodb: the DynamoDB requests and capacity',
    '# that one operation cost.',
    'query AlertManagement {',
    '  capability(id: "CAP-ALERT-MGT-001") {',
    '    name',
    '    businessDomain',
    '    aggregates { healthScore healthStatus }',
    '    components {',
    '      componentId componentType layer',
    '      health { status availability }',
    '    }',
    '    dependencies {',
    '      sourceComponentId targetComponentId',
    '      dependencyType criticality',
    '    }',
    '  }',
    '}',
    ''
  ].join('\n');
  var fetcher = GraphiQL.createFetcher({ url: url, headers: headers });
  ReactDOM.createRoot(root).render(
    React.createElement(GraphiQL, {
      fetcher: fetcher,
      defaultQuery: defaultQuery,
      isHeadersEditorEnabled: true,
      shouldPersistHeaders: false,
      defaultEditorToolsVisibility: true
    })
  );
})();
